"""A custom autograd.Function for a scaled clamp takes (x, scale). Its backward
checks ctx.needs_input_grad[1] (the float scale) instead of [0] before computing
the gradient for x, so it returns None for x and nothing before it trains.
"""
import torch
import torch.nn as nn

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net.weight"
EXPECT = "grad_none"


class ScaledClamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x.clamp(-1, 1) * scale

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        grad_x = None
        if ctx.needs_input_grad[1]:
            grad_x = grad_out * (x.abs() <= 1).to(grad_out.dtype) * ctx.scale
        return grad_x, None  # <-- CUT


def run():
    torch.manual_seed(0)
    net = nn.Linear(5, 5)
    head = nn.Linear(5, 1)
    x = torch.randn(4, 5)
    out = head(ScaledClamp.apply(net(x), 2.0))
    loss = out.pow(2).sum()
    loss.backward()
    return {"net": net, "head": head, "loss": loss}
