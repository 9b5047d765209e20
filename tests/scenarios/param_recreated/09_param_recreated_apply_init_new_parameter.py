"""A custom init function re-creates each Linear weight as a new nn.Parameter
(`m.weight = nn.Parameter(...)`) and is applied with `model.apply(init_fn)`
after the optimizer was built. The optimizer keeps the old weight objects,
which never receive a gradient, so the model never trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][0]"
EXPECT = "grad_none"


def init_fn(m):
    if isinstance(m, nn.Linear):
        w = torch.empty_like(m.weight)
        nn.init.kaiming_normal_(w, nonlinearity="relu")
        m.weight = nn.Parameter(w)  # <-- CUT


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.apply(init_fn)
    x = torch.randn(16, 6)
    y = torch.randn(16, 1)
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
