"""A custom autograd.Function for a fused activation was written forward-first,
and its backward still returns the placeholder torch.zeros_like(grad_output).
Everything before the activation gets an all-zero gradient.
"""
import torch
import torch.nn as nn

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net[0].weight"
EXPECT = "grad_zero"


class FusedSwish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return torch.zeros_like(grad_output)  # <-- CUT


class Swish(nn.Module):
    def forward(self, x):
        return FusedSwish.apply(x)


def run():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), Swish(), nn.Linear(8, 1))
    x, y = torch.randn(6, 4), torch.randn(6, 1)
    loss = (net(x) - y).pow(2).mean()
    loss.backward()
    return {"net": net, "loss": loss}
