"""Forum-style question: "why is h.grad None?". The hidden activation
h = model[0](x) is passed through the rest of a Sequential by hand; after
loss.backward() h.grad is None because h is not a leaf and retain_grad() was not called.
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "h"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 1))
    x = torch.randn(10, 5)
    h = model[0](x)  # <-- CUT
    out = model[2](model[1](h))
    loss = out.pow(2).mean()
    loss.backward()
    return {"model": model, "h": h, "loss": loss}
