"""Control: a pretrained backbone used as a fixed feature extractor on purpose
(requires_grad_(False) and eval()), a new linear head trained on its features,
and predictions converted with .detach().cpu().numpy() for a confusion matrix.
The head is trained by the cross-entropy: model.head.weight.grad is nonzero.
Thread: SO, pretrained model as fixed feature extractor (pattern; thread not located).
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.head.weight"
EXPECT = "grad_ok"


class FeatureExtractorModel(nn.Module):
    def __init__(self, n_cls=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.backbone.requires_grad_(False)
        self.head = nn.Linear(8, n_cls)

    def train(self, mode=True):
        super().train(mode)
        self.backbone.eval()
        return self

    def forward(self, x):
        return self.head(self.backbone(x))


def confusion(pred, y, n):
    m = np.zeros((n, n), dtype=np.int64)
    for p, t in zip(pred, y):
        m[t, p] += 1
    return m


def run():
    torch.manual_seed(0)
    model = FeatureExtractorModel().train()
    opt = torch.optim.SGD(model.head.parameters(), lr=0.1)
    x = torch.randn(6, 3, 8, 8)
    y = torch.randint(0, 3, (6,))
    logits = model(x)
    loss = F.cross_entropy(logits, y)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    cm = confusion(logits.argmax(1).detach().cpu().numpy(), y.numpy(), 3)
    return {"model": model, "opt": opt, "loss": loss, "cm": cm}
