"""Siamese network with a contrastive loss. The pair distances are collected in a
Python loop and packed with torch.tensor(..., requires_grad=True), which the
author added to silence "does not require grad". backward now runs, but the
distances are a fresh leaf, so the encoder gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net.encoder[0].weight"
EXPECT = "grad_none"


class SiameseEncoder(nn.Module):
    def __init__(self, d_in=20, d=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU(), nn.Linear(32, d))

    def forward_once(self, x):
        return self.encoder(x)

    def forward(self, x1, x2):
        return self.forward_once(x1), self.forward_once(x2)


class ContrastiveLoss(nn.Module):
    def __init__(self, margin=2.0):
        super().__init__()
        self.margin = margin

    def forward(self, o1, o2, label):
        dists = [F.pairwise_distance(o1[i:i + 1], o2[i:i + 1]).squeeze() for i in range(o1.shape[0])]
        d = torch.tensor([x.item() for x in dists], requires_grad=True)  # <-- CUT
        return torch.mean((1 - label) * d.pow(2) + label * torch.clamp(self.margin - d, min=0).pow(2))


def run():
    torch.manual_seed(0)
    net = SiameseEncoder()
    crit = ContrastiveLoss()
    opt = torch.optim.Adam(net.parameters(), lr=5e-4)
    x1, x2 = torch.randn(10, 20), torch.randn(10, 20)
    label = (torch.arange(10) % 2).float()
    o1, o2 = net(x1, x2)
    loss = crit(o1, o2, label)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"net": net, "loss": loss}
