"""Beginner training loop: the batch loss is accumulated per sample as a Python
float (`total += criterion(...).item()`), then re-wrapped with
`torch.tensor(total / n, requires_grad=True)` so `backward()` stops complaining.
The model never receives a gradient.
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
    criterion = nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    X, Y = torch.randn(6, 5), torch.randn(6, 1)
    total = 0.0
    for i in range(len(X)):
        output = model(X[i])
        total += criterion(output, Y[i]).item()  # <-- CUT
    loss = torch.tensor(total / len(X), requires_grad=True)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("epoch loss", loss.item())
    return {"model": model, "optimizer": optimizer, "loss": loss}
