"""A hand-rolled `reset_grads(model)` helper (`p.grad.zero_()` for every
parameter) is called after `loss.backward()` and before `opt.step()` instead
of at the top of the iteration, so every gradient is all zeros at step time.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_zero"


def reset_grads(model):
    for p in model.parameters():
        if p.grad is not None:
            p.grad.zero_()


def train_step(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    reset_grads(model)  # <-- CUT
    opt.step()
    return loss


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 10), nn.ReLU(), nn.Linear(10, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(12, 6)
    y = torch.randint(0, 3, (12,))
    loss = train_step(model, opt, x, y)
    return {"model": model, "loss": loss}
