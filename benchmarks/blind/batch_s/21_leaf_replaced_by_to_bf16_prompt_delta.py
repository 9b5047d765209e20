"""Test-time input adaptation under bfloat16 autocast on CPU: a learnable input
perturbation delta is created as a float32 leaf and then rebound with
delta = delta.to(torch.bfloat16) to match the autocast dtype. delta.grad stays
None; the original float32 leaf, held by the optimizer, is what receives it."""
import torch
import torch.nn as nn

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "delta"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
    model.requires_grad_(False)
    x = torch.randn(5, 10)
    delta = torch.zeros(1, 10, requires_grad=True)
    opt = torch.optim.SGD([delta], lr=0.1)
    delta = delta.to(torch.bfloat16)  # <-- CUT
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(x.to(torch.bfloat16) + delta)
        p = logits.float().softmax(1)
        ent = -(p * p.clamp_min(1e-6).log()).sum(1).mean()
    opt.zero_grad()
    ent.backward()
    opt.step()
    return {"model": model, "delta": delta, "opt": opt, "ent": ent}
