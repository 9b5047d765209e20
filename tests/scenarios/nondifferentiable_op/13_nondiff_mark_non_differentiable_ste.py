"""A custom straight-through rounding Function: the author called
`ctx.mark_non_differentiable(out)` believing it tells autograd "use my backward".
It makes the output a constant instead, so the quantised encoder gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.enc.weight"
EXPECT = "grad_none"


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.round(x * 4) / 4
        ctx.mark_non_differentiable(out)  # <-- CUT
        return out

    @staticmethod
    def backward(ctx, g):
        return g


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 16)
        self.dec = nn.Linear(16, 8)

    def forward(self, x):
        return self.dec(RoundSTE.apply(torch.tanh(self.enc(x))))


def run():
    torch.manual_seed(0)
    model = QNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(16, 8)
    loss = F.mse_loss(model(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
