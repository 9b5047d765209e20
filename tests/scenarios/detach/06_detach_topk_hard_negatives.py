"""Metric learning with hard-negative mining: the two hardest negative distances
per anchor come from `torch.topk(..., largest=False)` and are then detached
("mining must not get gradients"). They are the only term that depends on the
embeddings' projection, so proj.weight.grad is None (the body still trains).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.proj.weight"
EXPECT = "grad_none"


class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.proj = nn.Linear(32, 8)

    def forward(self, x):
        h = self.body(x)
        return F.normalize(self.proj(h), dim=-1), h


def run():
    torch.manual_seed(0)
    model = Embedder()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(12, 10)
    labels = torch.arange(12) % 3
    z, h = model(x)
    d = torch.cdist(z, z)
    same = labels[:, None] == labels[None, :]
    neg_d = d.masked_fill(same, float("inf"))
    hard_neg, _ = torch.topk(neg_d, 2, dim=1, largest=False)
    hard_neg = hard_neg.detach()  # <-- CUT
    loss = F.relu(1.0 - hard_neg).mean() + 1e-3 * h.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
