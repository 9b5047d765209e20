"""Gradient accumulation over micro-batches: the user put optimizer.zero_grad()
at the end of the micro-batch loop body (after backward), so when the loop ends
every .grad is None; clip_grad_norm_ and step() see nothing to do."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_none"

CFG = {"accum_steps": 4, "micro_bs": 4, "clip": 1.0}


def train_step(model, opt, x, y):
    micro_x, micro_y = x.split(CFG["micro_bs"]), y.split(CFG["micro_bs"])
    total = 0.0
    for mx, my in zip(micro_x, micro_y):
        loss = F.cross_entropy(model(mx), my) / CFG["accum_steps"]
        loss.backward()
        total += loss.item()
        opt.zero_grad()  # <-- CUT
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), CFG["clip"])
    opt.step()
    return total, norm


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    total, norm = train_step(model, opt, x, y)
    return {"model": model, "opt": opt, "total": total, "norm": norm}
