"""Residual fusion with a learnable mixing gate g = alpha.clamp(0, 1) (clamp instead of a
sigmoid; the forum answer notes clamp only passes gradient inside (min, max)). The config
sets the initial alpha to 2.0, meaning "favour the new branch twice as much", so the gate
is saturated at 1 from the start and alpha's gradient is exactly zero.
Thread: discuss.pytorch.org/t/torch-round-gradient/28628
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fuse.alpha"
EXPECT = "grad_zero"

CFG = {"alpha_init": 2.0, "lr": 1e-3}


class GatedFusion(nn.Module):
    def __init__(self, d, alpha_init):
        super().__init__()
        self.new_branch = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))
        self.alpha = nn.Parameter(torch.tensor(alpha_init))

    def forward(self, h):
        g = self.alpha.clamp(0.0, 1.0)  # <-- CUT
        return (1 - g) * h + g * self.new_branch(h)


class Model(nn.Module):
    def __init__(self, d=12, n_cls=4):
        super().__init__()
        self.stem = nn.Linear(8, d)
        self.fuse = GatedFusion(d, CFG["alpha_init"])
        self.head = nn.Linear(d, n_cls)

    def forward(self, x):
        return self.head(self.fuse(torch.relu(self.stem(x))))


def run():
    torch.manual_seed(0)
    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=CFG["lr"])
    x = torch.randn(8, 8)
    y = torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
