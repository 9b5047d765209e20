"""Learned-score pruning (edge-popup style) where the binary mask is built from
scores.topk(k).indices and scattered into a zeros tensor. No straight-through
estimator: the masked weights train, the scores never get a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.scores"
EXPECT = "grad_none"


class ScoredLinear(nn.Linear):
    def __init__(self, i, o, keep=0.5):
        super().__init__(i, o)
        self.scores = nn.Parameter(torch.randn(o, i) * 0.01)
        self.keep = keep

    def get_mask(self):
        k = int(self.keep * self.scores.numel())
        idx = self.scores.abs().flatten().topk(k).indices  # <-- CUT
        mask = torch.zeros(self.scores.numel())
        mask[idx] = 1.0
        return mask.view_as(self.scores)

    def forward(self, x):
        return F.linear(x, self.weight * self.get_mask(), self.bias)


class PrunedMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = ScoredLinear(10, 32)
        self.fc2 = nn.Linear(32, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def run():
    torch.manual_seed(0)
    model = PrunedMLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
