"""Contrastive embedding loss with a hand-written Euclidean distance
sqrt(((a - b) ** 2).sum(-1)). Some pairs are identical (the same sample appears
twice in the batch), so sqrt is evaluated at exactly 0 and its backward is inf*0 =
NaN; with anomaly detection on, backward raises "returned nan values".
Thread: SO, NaN gradient of sqrt at zero distance (pattern; thread not located).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, x):
        return self.net(x)


def euclidean(a, b):
    return torch.sqrt(((a - b) ** 2).sum(-1))  # <-- CUT


def contrastive_loss(za, zb, same, margin=1.0):
    d = euclidean(za, zb)
    return (same * d.pow(2) + (1 - same) * F.relu(margin - d).pow(2)).mean()


def run():
    torch.manual_seed(0)
    model = Embedder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xa = torch.randn(8, 6)
    xb = torch.randn(8, 6)
    xb[:3] = xa[:3]  # duplicated samples form positive pairs
    same = torch.zeros(8)
    same[:3] = 1.0
    with torch.autograd.detect_anomaly():
        loss = contrastive_loss(model(xa), model(xb), same)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
