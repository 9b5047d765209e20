"""Layer-wise learning-rate multipliers implemented as gradient hooks: each
parameter's hook returns grad * mult, with mult looked up in cfg["lr_mult"] by
module name. Names missing from the dict default to 0.0 instead of 1.0, so the
backbone's gradients are all zeros: model.backbone[0].weight.grad is exactly zero.
Thread: SO, per-parameter gradient-multiplier hooks (pattern; thread not located).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.backbone[0].weight"
EXPECT = "grad_zero"

CFG = {"lr_mult": {"head": 10.0}, "lr": 1e-3}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU())
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.backbone(x))


def make_hook(mult):
    def hook(grad):
        return grad * mult  # <-- CUT
    return hook


def install_lr_mult(model, cfg):
    for name, p in model.named_parameters():
        top = name.split(".")[0]
        p.register_hook(make_hook(cfg["lr_mult"].get(top, 0.0)))


def run():
    torch.manual_seed(0)
    model = Model()
    install_lr_mult(model, CFG)
    opt = torch.optim.SGD(model.parameters(), lr=CFG["lr"])
    x = torch.randn(10, 8)
    y = torch.randint(0, 3, (10,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
