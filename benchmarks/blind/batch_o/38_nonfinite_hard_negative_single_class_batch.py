"""Supervised hardness-aware contrastive loss: negatives are re-weighted by a
softmax over same-class-masked (-inf) similarities. The last batch of the epoch
holds a single class, so every row is all -inf, the weights are NaN and the
projector's gradient is NaN.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.projector.weight"
EXPECT = "grad_nonfinite"


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.projector = nn.Linear(32, 8)

    def forward(self, x):
        return F.normalize(self.projector(self.backbone(x)), dim=1)


def hard_negative_loss(z1, z2, labels, tau=0.1, beta=1.0):
    pos = (z1 * z2).sum(1) / tau
    sim = z1 @ z2.t() / tau
    same = labels[:, None] == labels[None, :]
    neg_logits = sim.masked_fill(same, float("-inf"))  # <-- CUT
    w = F.softmax(beta * neg_logits, dim=1).detach()
    neg = (w * sim.exp()).sum(1) * (labels.numel() - 1)
    return (-pos + torch.log(pos.exp() + neg)).mean()


def run():
    torch.manual_seed(0)
    model = Encoder()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 10)
    labels = torch.tensor([2, 2, 2, 2])
    z1 = model(x + 0.05 * torch.randn_like(x))
    z2 = model(x + 0.05 * torch.randn_like(x))
    loss = hard_negative_loss(z1, z2, labels)
    opt.zero_grad()
    loss.backward()
    return {"model": model, "loss": loss}
