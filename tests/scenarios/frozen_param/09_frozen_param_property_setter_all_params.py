"""A model exposes `freeze_encoder` as a property; its setter was meant to toggle the
encoder only but loops over `self.parameters()`, so `model.freeze_encoder = True`
also freezes the new classification head.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.head.weight"
EXPECT = "grad_none"


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)
        self.adapter = nn.Parameter(torch.zeros(32))

    @property
    def freeze_encoder(self):
        return not self.encoder[0].weight.requires_grad

    @freeze_encoder.setter
    def freeze_encoder(self, value):
        for p in self.parameters():
            p.requires_grad = not value  # <-- CUT

    def forward(self, x):
        return self.head(self.encoder(x) + self.adapter)


def run():
    torch.manual_seed(0)
    model = Classifier()
    model.freeze_encoder = True
    model.adapter.requires_grad_(True)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    x, y = torch.randn(8, 10), torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
