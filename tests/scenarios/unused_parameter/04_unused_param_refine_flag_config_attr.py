"""Segmentation head with an optional refinement module. The refiner is always
built and handed to the optimizer, but `_maybe_refine` checks `cfg.refine`,
whose default is False, while the training script set `cfg.use_refine = True`
(the attribute name from the README): the refiner is skipped, its grads None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.refiner[0].weight"
EXPECT = "grad_none"


class HeadConfig:
    def __init__(self, channels=8, n_classes=3, refine=False):
        self.channels = channels
        self.n_classes = n_classes
        self.refine = refine


class SegHead(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.body = nn.Sequential(nn.Conv2d(3, cfg.channels, 3, padding=1), nn.ReLU())
        self.refiner = nn.Sequential(nn.Conv2d(cfg.channels, cfg.channels, 3, padding=1), nn.ReLU())
        self.cls = nn.Conv2d(cfg.channels, cfg.n_classes, 1)

    def _maybe_refine(self, h):
        if not self.cfg.refine:
            return h  # <-- CUT
        return h + self.refiner(h)

    def forward(self, x):
        return self.cls(self._maybe_refine(self.body(x)))


def run():
    torch.manual_seed(0)
    cfg = HeadConfig()
    cfg.use_refine = True
    model = SegHead(cfg)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(2, 3, 8, 8), torch.randint(0, 3, (2, 8, 8))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss, "cfg": cfg}
