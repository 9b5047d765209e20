"""A layer is created lazily inside forward() (self.fc = nn.Linear(...)) so its
input size can be inferred. Every call builds a new layer: the optimizer, built
after the first call, holds parameters the next forward no longer uses.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][-1]"
EXPECT = "grad_none"


class LazyHead(nn.Module):
    def __init__(self, n_out=3):
        super().__init__()
        self.n_out = n_out
        self.conv = nn.Conv2d(1, 4, 3)

    def forward(self, x):
        h = F.relu(self.conv(x)).flatten(1)
        self.fc = nn.Linear(h.shape[1], self.n_out)  # <-- CUT
        return self.fc(h)


def run():
    torch.manual_seed(0)
    model = LazyHead()
    x, y = torch.randn(2, 1, 6, 6), torch.tensor([0, 2])
    model(x)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
