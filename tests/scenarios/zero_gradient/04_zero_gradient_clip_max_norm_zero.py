"""Gradient clipping is "disabled" in the config with max_norm=0.0, but
clip_grad_norm_(params, 0.0) scales every gradient by 0: after the call all
weights have an all-zero .grad and the optimizer step does nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_zero"


def run():
    torch.manual_seed(0)
    cfg = {"lr": 0.1, "clip": 0.0}
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    x, y = torch.randn(6, 4), torch.randint(0, 2, (6,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=cfg["clip"])  # <-- CUT
    opt.step()
    return {"model": model, "loss": loss}
