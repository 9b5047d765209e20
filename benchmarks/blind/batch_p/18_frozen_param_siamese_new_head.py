"""Siamese verification model: a pretrained CNN backbone is frozen on purpose
except its last block, and a new embedding head is added. setup() builds the head
first and then runs the freeze loop over the whole model, so the new head is
frozen too; the optimizer filters on requires_grad, and head.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.head.weight"
EXPECT = "grad_none"


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.block2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))

    def forward(self, x):
        return self.block2(self.block1(x)).flatten(1)


class SiameseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        self.head = None

    def forward(self, x1, x2):
        e1, e2 = F.normalize(self.head(self.backbone(x1)), dim=1), F.normalize(self.head(self.backbone(x2)), dim=1)
        return e1, e2


class Trainer:
    def __init__(self, model):
        self.model = model

    def setup(self, emb_dim=8):
        self.model.head = nn.Linear(16, emb_dim)
        for name, p in self.model.named_parameters():
            p.requires_grad = False  # <-- CUT
        for p in self.model.backbone.block2.parameters():
            p.requires_grad = True
        self.opt = torch.optim.Adam([p for p in self.model.parameters() if p.requires_grad], lr=1e-3)

    def step(self, x1, x2, same):
        e1, e2 = self.model(x1, x2)
        d = (e1 - e2).pow(2).sum(1)
        loss = (same * d + (1 - same) * F.relu(1.0 - d)).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    model = SiameseNet()
    trainer = Trainer(model)
    trainer.setup()
    x1, x2 = torch.randn(6, 1, 8, 8), torch.randn(6, 1, 8, 8)
    same = torch.tensor([1.0, 0, 1, 0, 1, 0])
    loss = trainer.step(x1, x2, same)
    return {"model": model, "loss": loss}
