"""The loss variable is overwritten before backward: the losses are summed as Python
floats with running_loss += loss.item(), then the user writes loss = torch.tensor(running_loss / n)
to "backprop the average". The new tensor has no graph and backward() raises.
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.weight"
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    criterion = nn.L1Loss()
    running_loss, n = 0.0, 0
    for _ in range(2):
        xb, yb = torch.randn(6, 3), torch.randn(6, 1)
        loss = criterion(model(xb), yb)
        running_loss += loss.item()  # <-- CUT
        n += 1
    loss = torch.tensor(running_loss / n)
    loss.backward()
    return {"model": model, "loss": loss}
