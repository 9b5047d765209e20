"""Learnable per-band gains kept as a list of scalar nn.Parameters (pytorch/pytorch#61410).
The module turns the list into one tensor with torch.Tensor([p, ...]) before scaling
the spectrum. That constructor copies the values and silently drops requires_grad,
so the gains never get a gradient; torch.stack(...) would have kept the graph.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.eq.gains[0]"
EXPECT = "grad_none"


class LearnableEqualizer(nn.Module):
    def __init__(self, n_bands=4):
        super().__init__()
        self.gains = nn.ParameterList([nn.Parameter(torch.FloatTensor([1.0])) for _ in range(n_bands)])

    def band_gains(self):
        g = torch.Tensor([p for p in self.gains])  # <-- CUT
        return g.view(1, -1, 1)

    def forward(self, spec):
        b, f, t = spec.shape
        bands = spec.view(b, len(self.gains), f // len(self.gains), t)
        scaled = bands * self.band_gains().unsqueeze(-1)
        return scaled.view(b, f, t)


class SpeechEnhancer(nn.Module):
    def __init__(self, n_freq=16):
        super().__init__()
        self.eq = LearnableEqualizer()
        self.mask_net = nn.Sequential(nn.Conv1d(n_freq, 32, 3, padding=1), nn.ReLU(),
                                      nn.Conv1d(32, n_freq, 3, padding=1), nn.Sigmoid())

    def forward(self, noisy_spec):
        spec = self.eq(noisy_spec)
        return spec * self.mask_net(spec)


def run():
    torch.manual_seed(0)
    model = SpeechEnhancer()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    clean = torch.rand(4, 16, 20)
    noisy = clean + 0.3 * torch.rand(4, 16, 20)
    opt.zero_grad()
    est = model(noisy)
    loss = F.mse_loss(est, clean)
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
