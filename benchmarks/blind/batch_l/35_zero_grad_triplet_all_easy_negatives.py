"""Triplet training for a product-image embedder. The positive is the anchor with a very
weak augmentation, and negatives are drawn from a random other catalogue, so every
triplet already satisfies the margin. relu(d_ap - d_an + margin) is 0 everywhere: the
loss is exactly 0 from the first step and the embedder's gradient is all zeros.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.net[0].weight"
EXPECT = "grad_zero"


class Embedder(nn.Module):
    def __init__(self, d_in=32, d_emb=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, 64), nn.ReLU(), nn.Linear(64, d_emb))

    def forward(self, x):
        return F.normalize(self.net(x), dim=-1)


class TripletLoss(nn.Module):
    def __init__(self, margin=0.2):
        super().__init__()
        self.margin = margin

    def forward(self, a, p, n):
        d_ap = (a - p).pow(2).sum(-1)
        d_an = (a - n).pow(2).sum(-1)
        losses = F.relu(d_ap - d_an + self.margin)  # <-- CUT
        return losses.mean()


def weak_augment(x):
    return x + 1e-3 * torch.randn_like(x)


def run():
    torch.manual_seed(0)
    model = Embedder()
    crit = TripletLoss(margin=0.2)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    anchors = torch.randn(16, 32)
    positives = weak_augment(anchors)
    negatives = -anchors + 0.1 * torch.randn(16, 32)  # items from the other catalogue
    loss = crit(model(anchors), model(positives), model(negatives))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
