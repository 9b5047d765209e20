"""Control: a "make sure nothing is stale" loop `for p in model.parameters():
p = p.detach()` only rebinds the loop variable; the module's parameters are
untouched and training works normally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.GELU(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for p in model.parameters():
        p = p.detach()
    x, y = torch.randn(10, 5), torch.randn(10, 1)
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)  # <-- CUT
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
