"""Gradient scaling for a shared trunk is done by a plain (non-nn.Module) `GradScale`
object registered with `register_full_backward_hook`; its `__call__` rescales grad_input.
The warmup config sets the scale to 0.0 ("trunk frozen by scaling"), so every gradient
that reaches the trunk's first layer is exactly zero.
"""
import torch
import torch.nn as nn

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.trunk[0].weight"
EXPECT = "grad_zero"


class GradScale:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, module, grad_input, grad_output):
        return tuple(None if g is None else g * self.scale for g in grad_input)  # <-- CUT


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(5, 6), nn.ReLU())
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        return self.head(self.trunk(x))


def run():
    torch.manual_seed(0)
    model = Net()
    cfg = {"trunk_grad_scale": 0.0}
    model.trunk[1].register_full_backward_hook(GradScale(cfg["trunk_grad_scale"]))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 5), torch.randint(0, 2, (8,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
