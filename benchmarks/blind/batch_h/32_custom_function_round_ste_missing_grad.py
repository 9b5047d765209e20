"""Straight-through rounding from the forum answer (my_round_func: round in forward,
pass grad_output through in backward), extended by the user to round to a learnable
step size: forward(ctx, input, step). backward still returns only grad_input, so
loss.backward() raises "returned an incorrect number of gradients (expected 2, got 1)".
Thread: discuss.pytorch.org/t/torch-round-gradient/28628
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class my_round_func(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, step):
        ctx.save_for_backward(step)
        return torch.round(input / step) * step

    @staticmethod
    def backward(ctx, grad_output):
        grad_input = grad_output.clone()
        return grad_input  # <-- CUT


class QuantNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.step = nn.Parameter(torch.tensor(0.05))
        self.fc2 = nn.Linear(16, 2)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        return self.fc2(my_round_func.apply(h, self.step))


def run():
    torch.manual_seed(0)
    model = QuantNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(4, 8)
    y = torch.tensor([0, 1, 1, 0])
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
