"""Classifier trained with MSE on the predicted class index:
loss = criterion(out.argmax(1).float(), y.float()). argmax has no gradient, so
the loss does not require grad and backward() raises.
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.weight"
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    model = nn.Linear(10, 5)
    criterion = nn.MSELoss()
    x = torch.randn(16, 10)
    y = torch.randint(0, 5, (16,))
    out = model(x)
    pred = out.argmax(1).float()  # <-- CUT
    loss = criterion(pred, y.float())
    loss.backward()
    return {"model": model, "loss": loss}
