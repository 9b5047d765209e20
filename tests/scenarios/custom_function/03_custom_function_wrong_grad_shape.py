"""A custom straight-through binarizer returns grad_output.sum(0) (a leftover
from a bias-gradient helper) as the input gradient. When backward runs PyTorch
raises "returned an invalid gradient at index 0 - got [8] but expected shape...".
"""
import torch
import torch.nn as nn

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class BinarizeSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return (x > 0).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.sum(0)  # <-- CUT


def run():
    torch.manual_seed(0)
    enc = nn.Linear(6, 8)
    dec = nn.Linear(8, 6)
    x = torch.randn(5, 6)
    loss = (dec(BinarizeSTE.apply(enc(x))) - x).pow(2).mean()
    loss.backward()
    return {"enc": enc, "dec": dec, "loss": loss}
