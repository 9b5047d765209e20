"""The user writes a "mini-tutorial" to understand .grad: an input leaf y with
requires_grad=True goes through a model, loss = out**2, then they print out.grad and
loss.grad expecting values. out is a non-leaf (no retain_grad), so out.grad is None even
though y.grad and the model's weight grads are filled.
Thread: discuss.pytorch.org/t/loss-grad-is-constant-1/130964
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "out"
EXPECT = "grad_none"


class Case:
    def __init__(self, name, model):
        self.name, self.model, self.report = name, model, {}

    def run(self, inp):
        out = self.model(inp)  # <-- CUT
        loss = (out ** 2).sum()
        loss.backward()
        self.report = {"x.grad": inp.grad, "out.grad": out.grad}
        return out, loss


def run():
    torch.manual_seed(0)
    model = nn.Linear(1, 1)
    x = torch.randn(1, 1)
    Case("no grad attribute", model).run(x)
    model.zero_grad()
    y = torch.randn(1, 1, requires_grad=True)
    case2 = Case("leaf with requires_grad", model)
    out, loss = case2.run(y)
    return {"model": model, "y": y, "out": out, "loss": loss, "case2": case2}
