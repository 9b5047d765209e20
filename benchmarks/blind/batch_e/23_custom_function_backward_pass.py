"""Custom autograd.Function that runs an inner optimisation in forward
(pytorch/pytorch#32091): forward solves for y by a few gradient steps on x*y, and
backward was left as a stub (`pass`), which returns None for every input. The
upstream feature layer that produces x therefore gets no gradient at all.
"""
import torch
import torch.nn as nn

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.feat.weight"
EXPECT = "grad_none"


class InnerSolve(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.zeros_like(x)
        for _ in range(20):
            g = x + y
            y = y - 0.1 * g
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        return None  # <-- CUT


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.feat = nn.Linear(6, 5)
        self.head = nn.Linear(5, 1)

    def forward(self, inp):
        x = self.feat(inp)
        y = InnerSolve.apply(x)
        return self.head(y)


def run():
    torch.manual_seed(0)
    model = Model()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    inp = torch.randn(8, 6)
    target = torch.randn(8, 1)
    opt.zero_grad()
    loss = ((model(inp) - target) ** 2).mean()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
