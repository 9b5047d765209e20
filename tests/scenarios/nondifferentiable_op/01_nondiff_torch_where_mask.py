"""A soft attention gate is replaced by a hard mask built with
torch.where(score > 0, 1.0, 0.0). The mask multiplies the features, but the
scorer that produces `score` gets no gradient through the comparison.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.scorer.weight"
EXPECT = "grad_none"


class GatedPool(nn.Module):
    def __init__(self, d=16, n_cls=4):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.scorer = nn.Linear(d, 1)
        self.cls = nn.Linear(d, n_cls)

    def forward(self, x):
        h = torch.tanh(self.proj(x))
        score = self.scorer(h)
        mask = torch.where(score > 0, 1.0, 0.0)  # <-- CUT
        pooled = (h * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.cls(pooled)


def run():
    torch.manual_seed(0)
    model = GatedPool()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(3, 7, 16)
    y = torch.randint(0, 4, (3,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
