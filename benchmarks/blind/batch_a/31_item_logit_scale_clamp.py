"""Sample4Geo-style InfoNCE with a learnable temperature
(Skyy93/Sample4Geo#8: logit_scale = nn.Parameter(log(1/0.07)), "since we use it
in the loss we can learn it"). A port clamps the scale with
min(self.logit_scale.exp().item(), 100), so model.logit_scale.grad is None.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.logit_scale"
EXPECT = "grad_none"


class TimmModel(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                   nn.Flatten(), nn.Linear(8, d))
        self.logit_scale = nn.Parameter(torch.ones([]) * float(np.log(1 / 0.07)))

    def forward(self, img1, img2):
        return self.model(img1), self.model(img2)


class InfoNCE(nn.Module):
    def forward(self, f1, f2, logit_scale):
        f1, f2 = F.normalize(f1, dim=-1), F.normalize(f2, dim=-1)
        logits = logit_scale * f1 @ f2.T
        labels = torch.arange(len(logits))
        return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2


def train_step(model, loss_fn, optimizer, query, reference):
    f1, f2 = model(query, reference)
    logit_scale = min(model.logit_scale.exp().item(), 100.0)  # <-- CUT
    loss = loss_fn(f1, f2, logit_scale)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


def run():
    torch.manual_seed(0)
    model = TimmModel()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    query, reference = torch.randn(6, 3, 9, 9), torch.randn(6, 3, 9, 9)
    loss = train_step(model, InfoNCE(), optimizer, query, reference)
    return {"model": model, "loss": loss}
