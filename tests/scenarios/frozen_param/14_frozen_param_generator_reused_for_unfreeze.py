"""Warm-up fine-tuning: backbone frozen for the first step, then unfrozen.
The backbone parameters were stored as a generator (model.backbone.parameters())
and iterated once to freeze; the unfreeze loop re-iterates the exhausted
generator and does nothing, so the backbone never trains: grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.backbone[0].weight"
EXPECT = "grad_none"


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU())
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.backbone(x))


def run():
    torch.manual_seed(0)
    model = Classifier()
    backbone_params = model.backbone.parameters()
    for p in backbone_params:
        p.requires_grad = False  # <-- CUT
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(3, 8, 10)
    y = torch.randint(0, 4, (3, 8))
    for step in range(3):
        if step == 1:
            for p in backbone_params:
                p.requires_grad = True
        opt.zero_grad()
        loss = F.cross_entropy(model(x[step]), y[step])
        loss.backward()
        opt.step()
    return {"model": model, "opt": opt, "loss": loss}
