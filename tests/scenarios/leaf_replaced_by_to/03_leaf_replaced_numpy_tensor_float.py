"""Inputs for a sensitivity analysis come from a float64 NumPy array:
x = torch.tensor(arr, requires_grad=True).float(). The .float() copy is a
non-leaf, so x.grad is None after backward (the float64 leaf got it).
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "x"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    arr = rng.normal(size=(5, 3))
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    x = torch.tensor(arr, requires_grad=True).float()  # <-- CUT
    model(x).sum().backward()
    return {"model": model, "x": x}
