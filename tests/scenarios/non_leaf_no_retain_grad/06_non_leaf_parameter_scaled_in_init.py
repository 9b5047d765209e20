"""Hand-written low-rank adapter: __init__ does
`self.U = nn.Parameter(torch.randn(d, r)) * 0.02`, scaling the Parameter instead
of the init tensor. self.U is then a plain non-leaf tensor attribute, not a
registered parameter, so after backward `model.adapter.U.grad` is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.adapter.U"
EXPECT = "grad_none"


class LowRankAdapter(nn.Module):
    def __init__(self, d=16, r=4):
        super().__init__()
        self.U = nn.Parameter(torch.randn(d, r)) * 0.02  # <-- CUT
        self.V = nn.Parameter(torch.zeros(r, d))

    def forward(self, h):
        return h + h @ self.U @ self.V


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
        self.adapter = LowRankAdapter()
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.adapter(self.base(x)))


def run():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
