"""Follows pytorch/pytorch#5022: `instrument_model` registers a module backward hook on every
layer whose hookFunc returns zeros shaped like the incoming gradients (an experiment on
dropping a fraction of the gradient signal, fraction 1.0 here). Each hooked layer passes an
all-zero gradient to its input, so every layer below the output gets an exactly-zero grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_zero"


def instrument_model(model, fraction_list):
    handles = []

    def register_hook(module):
        if module is model:
            return
        frac = fraction_list.get(type(module).__name__, 0.0)

        def hookFunc(module, grad_input, grad_output):
            keep = 1.0 - frac
            return tuple(None if g is None else g * keep for g in grad_input)  # <-- CUT

        handles.append(module.register_full_backward_hook(hookFunc))

    model.apply(register_hook)
    return handles


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))
    handles = instrument_model(model, {"ReLU": 1.0})
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 10)
    y = torch.randint(0, 3, (8,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss, "handles": handles}
