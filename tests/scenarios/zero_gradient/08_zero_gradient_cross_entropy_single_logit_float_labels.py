"""Binary classifier with a single output unit trained with `nn.CrossEntropyLoss()`
on float 0/1 labels of shape (N, 1). The labels are read as class probabilities
over ONE class; softmax over one logit is always 1, so the loss is 0 and every
gradient is exactly zero (use BCEWithLogitsLoss).
"""
import torch
import torch.nn as nn

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_zero"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(7, 16), nn.ReLU(), nn.Linear(16, 1))
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(10, 7)
    labels = torch.randint(0, 2, (10, 1)).float()
    outputs = model(x)
    loss = criterion(outputs, labels)  # <-- CUT
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
