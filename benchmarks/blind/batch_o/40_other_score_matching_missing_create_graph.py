"""Denoising score matching with an energy network: the score -dE/dx is taken
with torch.autograd.grad(...) but without create_graph=True, so the score has
no graph back to the energy network's weights and loss.backward() raises
"element 0 of tensors does not require grad".
"""
import torch
import torch.nn as nn

CAUSE = "other:autograd_grad_without_create_graph"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class EnergyNet(nn.Module):
    def __init__(self, d=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 64), nn.Softplus(), nn.Linear(64, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def score_fn(model, x):
    x = x.requires_grad_(True)
    energy = model(x).sum()
    return -torch.autograd.grad(energy, x)[0]  # <-- CUT


def dsm_loss(model, x, sigmas):
    idx = torch.arange(x.shape[0]) % len(sigmas)
    s = sigmas[idx][:, None]
    noise = torch.randn_like(x) * s
    score = score_fn(model, x + noise)
    return (0.5 * ((score * s + noise / s) ** 2).sum(1)).mean()


def run():
    torch.manual_seed(0)
    model = EnergyNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(32, 2)
    loss = dsm_loss(model, x, torch.tensor([1.0, 0.5, 0.1]))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
