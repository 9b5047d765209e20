"""Segmentation with a hand-written Dice loss: the helper converts the logits to a
one-hot prediction with `F.one_hot(logits.argmax(1))` to match the target's
format. Nothing in the loss requires grad any more, so backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "backward_error"


def dice_loss(logits, target, n_cls, eps=1.0):
    pred = F.one_hot(logits.argmax(1), n_cls).permute(0, 3, 1, 2).float()  # <-- CUT
    tgt = F.one_hot(target, n_cls).permute(0, 3, 1, 2).float()
    inter = (pred * tgt).sum((2, 3))
    union = pred.sum((2, 3)) + tgt.sum((2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(2, 3, 8, 8), torch.randint(0, 4, (2, 8, 8))
    loss = dice_loss(model(x), y, 4)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
