"""Averaging per-batch losses with np.mean. np.mean on tensors raised, so the user
appended loss.detach().numpy() and rewrapped the mean with
torch.tensor(..., requires_grad=True). backward() runs but model.weight.grad is None.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    criterion = nn.MSELoss()
    batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]
    losses = []
    for xb, yb in batches:
        l = criterion(model(xb), yb)
        losses.append(l.detach().numpy())  # <-- CUT
    loss = torch.tensor(np.mean(losses), requires_grad=True)
    loss.backward()
    return {"model": model, "loss": loss}
