"""The user optimises accuracy directly: loss = 1 - (pred.argmax(1) == y).float().mean().
The comparison of integer predictions has no gradient, so the loss has no
grad_fn and backward() raises.
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 10), nn.ReLU(), nn.Linear(10, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(9, 4), torch.randint(0, 3, (9,))
    pred = model(x)
    loss = 1 - (pred.argmax(1) == y).float().mean()  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
