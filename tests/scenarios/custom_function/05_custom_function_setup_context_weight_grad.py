"""A fused "linear + squared ReLU" written as a new-style autograd.Function
(forward without ctx, plus setup_context). Its backward computes the input
gradient and leaves the weight gradient as a TODO returning None, so the layer
before it trains while the fused layer's weight.grad stays None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fused.weight"
EXPECT = "grad_none"


class LinearReLU2(torch.autograd.Function):
    @staticmethod
    def forward(x, weight):
        return F.relu(x @ weight.t()) ** 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, weight = inputs
        ctx.save_for_backward(x, weight)

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        pre = x @ weight.t()
        g = grad_out * 2 * F.relu(pre)
        grad_x = g @ weight
        grad_w = None  # TODO: g.t() @ x
        return grad_x, grad_w  # <-- CUT


class FusedLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_out, d_in) * d_in ** -0.5)

    def forward(self, x):
        return LinearReLU2.apply(x, self.weight)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(6, 12)
        self.fused = FusedLayer(12, 12)
        self.out = nn.Linear(12, 1)

    def forward(self, x):
        return self.out(self.fused(self.inp(x)))


def run():
    torch.manual_seed(0)
    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(10, 6)
    y = torch.randn(10, 1)
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
