"""Transfer learning with a "freeze everything until layer X" helper driven by a config.
The loop freezes each parameter and stops when the name equals cfg["unfreeze_from"],
but names are "blocks.2.weight", never "blocks.2", so every parameter is frozen, the
new head included. The optimizer filter hides it; backward raises "element 0".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Backbone(nn.Module):
    def __init__(self, d=16, depth=3, n_cls=4):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(d, d) for _ in range(depth)])
        self.head = nn.Linear(d, n_cls)

    def forward(self, x):
        for blk in self.blocks:
            x = F.gelu(blk(x))
        return self.head(x)


def freeze_until(model, stop_name):
    for name, p in model.named_parameters():
        if name == stop_name:
            break
        p.requires_grad = False  # <-- CUT


def run():
    torch.manual_seed(0)
    cfg = {"unfreeze_from": "blocks.2", "lr": 1e-3}
    model = Backbone()
    pretrained = Backbone().state_dict()
    pretrained = {k: v for k, v in pretrained.items() if not k.startswith("head")}
    model.load_state_dict(pretrained, strict=False)
    freeze_until(model, cfg["unfreeze_from"])
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable or [nn.Parameter(torch.zeros(1))], lr=cfg["lr"])
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
