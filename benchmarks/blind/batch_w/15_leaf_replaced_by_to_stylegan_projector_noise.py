"""StyleGAN projector: the per-layer noise maps are created with requires_grad=True
and rebound with n = n.to(device, dtype), which returns a new non-leaf tensor. The
noise-importance readout after backward (noises[i].grad) finds None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "noises[0]"
EXPECT = "grad_none"


class Synthesis(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16)
        self.noise_strength = nn.Parameter(torch.full((2,), 0.1))

    def forward(self, w, noises):
        x = self.fc(w)
        for i, n in enumerate(noises):
            x = F.leaky_relu(x + self.noise_strength[i] * n, 0.2)
        return x


def run():
    torch.manual_seed(0)
    device, dtype = "cpu", torch.float64
    G = Synthesis().to(dtype)
    for p in G.parameters():
        p.requires_grad = False
    target = torch.randn(1, 16, dtype=dtype)
    w_opt = torch.zeros(1, 8, dtype=dtype, requires_grad=True)
    noises = []
    for _ in range(2):
        n = torch.randn(1, 16, requires_grad=True)
        n = n.to(device, dtype)  # <-- CUT
        noises.append(n)
    optimizer = torch.optim.Adam([w_opt], lr=0.1)
    synth = G(w_opt, noises)
    loss = F.mse_loss(synth, target) + sum((n * n).mean() for n in noises) * 1e-3
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    importance = [n.grad for n in noises]
    return {"noises": noises, "importance": importance, "w_opt": w_opt, "G": G}
