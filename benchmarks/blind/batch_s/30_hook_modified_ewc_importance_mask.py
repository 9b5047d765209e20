"""Continual learning with a hard importance mask: parameters deemed important
for task A (Fisher above a threshold) are protected by a gradient hook that
multiplies the gradient by a mask. The mask is built inverted (fisher > thr
where thr is 0), so every entry is masked and the layer's gradient is all zeros."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc.weight"
EXPECT = "grad_zero"


def estimate_fisher(model, x, y):
    model.zero_grad()
    F.cross_entropy(model(x), y).backward()
    return {n: p.grad.detach() ** 2 + 1e-8 for n, p in model.named_parameters()}


class MaskHook:
    def __init__(self, mask):
        self.mask = mask

    def __call__(self, grad):
        return grad * self.mask  # <-- CUT


def run():
    torch.manual_seed(0)
    model = nn.Sequential()
    model.add_module("body", nn.Linear(6, 10))
    model.add_module("act", nn.ReLU())
    model.add_module("fc", nn.Linear(10, 3))
    xa, ya = torch.randn(16, 6), torch.randint(0, 3, (16,))
    fisher = estimate_fisher(model, xa, ya)
    thr = 0.0
    free = (fisher["fc.weight"] <= thr).float()
    model.fc.weight.register_hook(MaskHook(free))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    xb, yb = torch.randn(16, 6), torch.randint(0, 3, (16,))
    loss = F.cross_entropy(model(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "fisher": fisher, "loss": loss}
