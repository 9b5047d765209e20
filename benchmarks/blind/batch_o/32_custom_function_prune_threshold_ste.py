"""Soft-threshold pruning with a custom straight-through Function: forward
builds (|w| > thr) masks, backward passes the gradient straight to the weights
but returns None for the learnable threshold ("a step has no gradient"), so
the sparsity threshold never learns.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc.threshold"
EXPECT = "grad_none"


class HardThresholdSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, weight, threshold):
        mask = (weight.abs() > threshold).to(weight.dtype)
        ctx.save_for_backward(mask)
        return weight * mask

    @staticmethod
    def backward(ctx, grad_out):
        (mask,) = ctx.saved_tensors
        return grad_out, None  # <-- CUT


class ThresholdLinear(nn.Linear):
    def __init__(self, i, o):
        super().__init__(i, o)
        self.threshold = nn.Parameter(torch.tensor(0.05))

    def forward(self, x):
        w = HardThresholdSTE.apply(self.weight, self.threshold)
        return F.linear(x, w, self.bias)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = ThresholdLinear(10, 16)
        self.out = nn.Linear(16, 2)

    def forward(self, x):
        return self.out(F.relu(self.fc(x)))


def run():
    torch.manual_seed(0)
    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(16, 10), torch.randint(0, 2, (16,))
    sparsity_reg = 1e-3 * model.fc.weight.abs().sum()
    loss = F.cross_entropy(model(x), y) + sparsity_reg
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
