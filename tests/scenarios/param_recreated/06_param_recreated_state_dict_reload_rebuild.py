"""Resuming from a checkpoint: the optimizer is built, then the model is rebuilt from
the config and the saved weights are loaded into the *new* model. The optimizer
still holds the old model's parameters, which never get a gradient again.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][0]"
EXPECT = "grad_none"


def build(cfg):
    return nn.Sequential(nn.Linear(cfg["d_in"], cfg["h"]), nn.ReLU(), nn.Linear(cfg["h"], 1))


def run():
    torch.manual_seed(0)
    cfg = {"d_in": 6, "h": 16}
    model = build(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ckpt = {"model": {k: v.clone() for k, v in model.state_dict().items()}}
    model = build(cfg)  # <-- CUT
    model.load_state_dict(ckpt["model"])
    x, y = torch.randn(20, 6), torch.randn(20, 1)
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
