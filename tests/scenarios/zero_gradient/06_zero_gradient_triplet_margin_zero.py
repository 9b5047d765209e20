"""Hand-written triplet loss `F.relu(d_ap - d_an + margin)` with the margin read
from a config where 0.0 was meant as "use the default". Positives are light
augmentations of the anchors and negatives are other samples, so every hinge
is already inactive: the embedder's gradient is exactly zero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_zero"


def triplet_loss(a, p, n, margin):
    d_ap = (a - p).pow(2).sum(-1)
    d_an = (a - n).pow(2).sum(-1)
    return F.relu(d_ap - d_an + margin).mean()  # <-- CUT


def run():
    torch.manual_seed(0)
    cfg = {"margin": 0.0, "lr": 0.01}
    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 8))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    x = torch.randn(16, 12)
    x_pos = x + 0.01 * torch.randn_like(x)
    x_neg = x.roll(1, dims=0)
    a, p, n = (F.normalize(model(t), dim=-1) for t in (x, x_pos, x_neg))
    loss = triplet_loss(a, p, n, cfg["margin"])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
