"""An evaluate() helper freezes the model with `p.requires_grad = False` for
speed and never restores it. It runs once before training starts, so in the
training step the encoder weights (only used by the model) get no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_none"


def evaluate(model, x, y):
    for p in model.parameters():
        p.requires_grad = False  # <-- CUT
    return (model(x).argmax(1) == y).float().mean()


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 3))
    adapter = nn.Linear(3, 3)
    opt = torch.optim.SGD(list(model.parameters()) + list(adapter.parameters()), lr=0.1)
    x, y = torch.randn(12, 5), torch.randint(0, 3, (12,))
    acc0 = evaluate(model, x, y)
    loss = F.cross_entropy(adapter(model(x)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "adapter": adapter, "loss": loss, "acc0": acc0}
