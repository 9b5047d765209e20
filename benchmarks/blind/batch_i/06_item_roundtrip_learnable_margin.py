"""Metric-learning model with a learnable triplet margin (nn.Parameter). The loss
helper clamps the margin with max(0.05, self.margin.item()) before using it, so
the embedding net trains but the margin is a Python float in the loss:
loss_fn.margin.grad is None.
Thread: SO, learnable loss parameter read with .item() (pattern; thread not located).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "loss_fn.margin"
EXPECT = "grad_none"


class EmbeddingNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 8))

    def forward(self, x):
        return F.normalize(self.net(x), dim=-1)


class AdaptiveTripletLoss(nn.Module):
    def __init__(self, init_margin=0.3):
        super().__init__()
        self.margin = nn.Parameter(torch.tensor(init_margin))

    def forward(self, a, p, n):
        m = max(0.05, self.margin.item())  # <-- CUT
        d_ap = (a - p).pow(2).sum(-1)
        d_an = (a - n).pow(2).sum(-1)
        # reward a larger margin a little, so it does not collapse to zero
        return F.relu(d_ap - d_an + m).mean() - 0.01 * m


def run():
    torch.manual_seed(0)
    net = EmbeddingNet()
    loss_fn = AdaptiveTripletLoss()
    opt = torch.optim.Adam(list(net.parameters()) + list(loss_fn.parameters()), lr=1e-3)
    anchor, pos, neg = torch.randn(16, 12), torch.randn(16, 12), torch.randn(16, 12)
    loss = loss_fn(net(anchor), net(pos + 0.1 * anchor), net(neg))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"net": net, "loss_fn": loss_fn, "opt": opt, "loss": loss}
