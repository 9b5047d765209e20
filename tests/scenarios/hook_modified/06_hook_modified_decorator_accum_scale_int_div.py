"""A `@scaled_for_accumulation(steps)` decorator on the loss function registers a hook
on the loss that divides its gradient by the accumulation steps. It computes the
factor with integer division `1 // steps`, which is 0: every gradient is zero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_zero"


def scaled_for_accumulation(steps):
    factor = 1 // steps

    def deco(loss_fn):
        def wrapper(*args, **kwargs):
            loss = loss_fn(*args, **kwargs)
            loss.register_hook(lambda g: g * factor)  # <-- CUT
            return loss
        wrapper.__name__ = loss_fn.__name__
        return wrapper
    return deco


@scaled_for_accumulation(4)
def criterion(logits, y):
    return F.cross_entropy(logits, y, label_smoothing=0.1)


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.zero_grad()
    for _ in range(2):
        x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
        loss = criterion(model(x), y)
        loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
