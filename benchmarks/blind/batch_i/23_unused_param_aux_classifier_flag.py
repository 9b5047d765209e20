"""Inception-style network with an auxiliary classifier. forward() returns early
unless self.use_aux is set, and the config key was spelled "aux_logits" in one
place and "use_aux" in another, so the aux branch never runs and its loss term is
always 0: model.aux.fc.weight.grad is None (DDP would complain about unused params).
Thread: SO, "Expected to have finished reduction in the prior iteration" (recalled).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.aux.fc.weight"
EXPECT = "grad_none"

CONFIG = {"aux_logits": True, "aux_weight": 0.4, "num_classes": 6}


class AuxHead(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.conv = nn.Conv2d(c, 4, 1)
        self.fc = nn.Linear(4, n)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(F.relu(self.conv(x)), 1).flatten(1))


class InceptionLike(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        n = cfg["num_classes"]
        self.use_aux = cfg.get("use_aux", False)
        self.stage1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.stage2 = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.aux = AuxHead(8, n)
        self.fc = nn.Linear(8, n)

    def forward(self, x):
        h = self.stage1(x)
        out = self.fc(self.stage2(h).mean((2, 3)))
        if not (self.training and self.use_aux):
            return out, None  # <-- CUT
        return out, self.aux(h)


def run():
    torch.manual_seed(0)
    model = InceptionLike(CONFIG)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(4, 3, 8, 8)
    y = torch.randint(0, 6, (4,))
    out, aux = model(x)
    loss = F.cross_entropy(out, y)
    if aux is not None:
        loss = loss + CONFIG["aux_weight"] * F.cross_entropy(aux, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
