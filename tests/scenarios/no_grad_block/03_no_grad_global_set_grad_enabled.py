"""A notebook cell disabled autograd globally with torch.set_grad_enabled(False)
for a quick evaluation and the next cell trains. The model output has no
history and loss.backward() raises "does not require grad".
"""
import torch
import torch.nn as nn

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    x_val = torch.randn(5, 4)
    prev = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    val_pred = model(x_val)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(10, 4), torch.randn(10, 1)
    try:
        pred = model(x)  # <-- CUT
        loss = ((pred - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    finally:
        torch.set_grad_enabled(prev)
    return {"model": model, "loss": loss, "val_pred": val_pred}
