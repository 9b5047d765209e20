"""Gradient accumulation over 4 micro-batches, but opt.zero_grad() was placed
right after loss.backward() instead of after opt.step(). Each micro-batch's
gradient is wiped, and at step() time every .grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    accum = 4
    data = [(torch.randn(4, 6), torch.randint(0, 2, (4,))) for _ in range(accum)]
    for i, (xb, yb) in enumerate(data):
        loss = F.cross_entropy(model(xb), yb) / accum
        loss.backward()
        opt.zero_grad()  # <-- CUT
        if (i + 1) % accum == 0:
            opt.step()
    return {"model": model, "opt": opt, "loss": loss}
