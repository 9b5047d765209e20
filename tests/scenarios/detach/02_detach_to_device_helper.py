"""A `to_device(t, dtype)` helper used for batches is also applied to the model
output before the loss; it was written as `t.detach().to(dtype)` to avoid
"leaking" graphs from the data loader. The projection layer gets no grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "proj.weight"
EXPECT = "grad_none"


def to_device(t, dtype=torch.float32):
    return t.detach().to(dtype)  # <-- CUT


def run():
    torch.manual_seed(0)
    proj = nn.Linear(8, 8)
    scale = nn.Parameter(torch.ones(8))
    opt = torch.optim.SGD([*proj.parameters(), scale], lr=0.1)
    x = to_device(torch.randn(10, 8))
    target = to_device(torch.randn(10, 8))
    out = to_device(proj(x)) * scale
    loss = F.smooth_l1_loss(out, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"proj": proj, "scale": scale, "loss": loss}
