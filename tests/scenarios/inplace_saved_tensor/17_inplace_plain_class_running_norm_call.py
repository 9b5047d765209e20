"""A plain Python `RunningNorm` object (not an nn.Module) divides its input by a stored
std tensor in `__call__` and then updates that tensor in place. Division saved the
std for backward, so `loss.backward()` raises a version-counter error.
"""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class RunningNorm:
    def __init__(self, dim, momentum=0.1):
        self.std = torch.ones(dim)
        self.momentum = momentum

    def __call__(self, x):
        out = x / self.std
        self.std.mul_(1 - self.momentum).add_(self.momentum * x.detach().std(0))  # <-- CUT
        return out


def run():
    torch.manual_seed(0)
    model = nn.Linear(5, 4)
    norm = RunningNorm(4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 5)
    h = norm(model(x))
    loss = h.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
