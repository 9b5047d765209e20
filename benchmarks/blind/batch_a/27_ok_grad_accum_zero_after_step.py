"""Control (Han-Jia/UNICORN-MAML#7, "zero_grad after backward, does it matter?"):
gradient accumulation where backward() runs every micro-batch and
opt.step(); opt.zero_grad() run every accum_steps. The run ends mid-window, so the
accumulated gradient of model[0].weight is a normal nonzero tensor.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_ok"


def train(model, opt, batches, accum_steps=4):
    log = []
    for step, (x, y) in enumerate(batches):
        loss = F.cross_entropy(model(x), y) / accum_steps  # <-- CUT
        loss.backward()
        if (step + 1) % accum_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad()
        log.append(loss.item())
    return log


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batches = [(torch.randn(4, 10), torch.randint(0, 3, (4,))) for _ in range(6)]
    log = train(model, opt, batches)
    return {"model": model, "opt": opt, "log": log}
