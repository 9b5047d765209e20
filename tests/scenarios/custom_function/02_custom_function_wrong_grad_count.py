"""A custom autograd.Function takes (x, weight) but its backward returns only the
gradient for x. PyTorch checks the count when backward runs and raises
"returned an incorrect number of gradients (expected 2, got 1)".
"""
import torch
import torch.nn as nn

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class ScaledTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        y = torch.tanh(x) * weight
        ctx.save_for_backward(x, weight)
        return y

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved_tensors
        return g * weight * (1 - torch.tanh(x) ** 2)  # <-- CUT


def run():
    torch.manual_seed(0)
    lin = nn.Linear(4, 4)
    w = nn.Parameter(torch.ones(4))
    out = ScaledTanh.apply(lin(torch.randn(3, 4)), w)
    loss = out.sum()
    loss.backward()
    return {"lin": lin, "w": w, "loss": loss}
