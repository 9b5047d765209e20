"""Learnable multi-task weights are normalised to sum to one by a small lambda that
returns `float(w[i] / w.sum())` so the loss log "prints nicely". The raw
weight vector then never receives a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "task_w"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    trunk = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
    heads = nn.ModuleList([nn.Linear(16, 1), nn.Linear(16, 3)])
    task_w = nn.Parameter(torch.ones(2))
    opt = torch.optim.Adam([*trunk.parameters(), *heads.parameters(), task_w], lr=1e-3)
    norm_w = lambda i: float(F.softplus(task_w[i]) / F.softplus(task_w).sum())  # <-- CUT
    x, y_reg, y_cls = torch.randn(12, 8), torch.randn(12, 1), torch.randint(0, 3, (12,))
    h = trunk(x)
    losses = [F.mse_loss(heads[0](h), y_reg), F.cross_entropy(heads[1](h), y_cls)]
    loss = sum(norm_w(i) * l for i, l in enumerate(losses))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"trunk": trunk, "heads": heads, "task_w": task_w, "opt": opt, "loss": loss}
