"""BinaryConnect-style layer written as a custom autograd.Function: forward uses
sign(weight), backward is meant to be a straight-through estimator. backward
returns the input gradient and None for the weight (the user thought the weight
grad was "handled by nn.Parameter"): model.bin.weight.grad is None.
Thread: SO, custom autograd.Function returns None for the weight (pattern; not located).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.bin.weight"
EXPECT = "grad_none"


class BinaryLinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        wb = weight.sign()
        ctx.save_for_backward(x, wb)
        return x @ wb.t()

    @staticmethod
    def backward(ctx, grad_out):
        x, wb = ctx.saved_tensors
        grad_x = grad_out @ wb
        return grad_x, None  # <-- CUT


class BinaryLinear(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_out, d_in) * 0.1)

    def forward(self, x):
        return BinaryLinearFn.apply(x, self.weight)


class BNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_in = nn.Linear(10, 16)
        self.bin = BinaryLinear(16, 16)
        self.bn = nn.BatchNorm1d(16)
        self.fc_out = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc_out(torch.tanh(self.bn(self.bin(torch.tanh(self.fc_in(x))))))


def run():
    torch.manual_seed(0)
    model = BNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(12, 10)
    y = torch.randint(0, 4, (12,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
