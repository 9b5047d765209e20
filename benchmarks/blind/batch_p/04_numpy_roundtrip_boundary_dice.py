"""Segmentation net with a mask head (BCE) and a boundary head trained with a
soft Dice loss that was ported from a numpy evaluation script. The dice helper
pulls the probabilities out with .detach().numpy(), so the boundary head gets no
gradient while the mask head and the shared encoder train.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.boundary_head.weight"
EXPECT = "grad_none"


class TinyUNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, c, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.mask_head = nn.Conv2d(c, 1, 1)
        self.boundary_head = nn.Conv2d(c, 1, 1)

    def forward(self, x):
        h = self.enc(x)
        return self.mask_head(h), self.boundary_head(h)


def soft_dice_loss(logits, target, smooth=1.0):
    p = torch.sigmoid(logits).detach().cpu().numpy()  # <-- CUT
    t = target.cpu().numpy()
    inter = (p * t).sum(axis=(1, 2, 3))
    dice = (2 * inter + smooth) / (p.sum(axis=(1, 2, 3)) + t.sum(axis=(1, 2, 3)) + smooth)
    return torch.from_numpy(1.0 - dice).float().mean()


def boundaries(mask):
    pooled = F.max_pool2d(mask, 3, stride=1, padding=1)
    return (pooled - mask).clamp(0, 1)


def run():
    torch.manual_seed(0)
    model = TinyUNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    img = torch.randn(4, 1, 16, 16)
    mask = (img > 0.3).float()
    mask_logits, bnd_logits = model(img)
    loss = F.binary_cross_entropy_with_logits(mask_logits, mask) + 0.5 * soft_dice_loss(bnd_logits, boundaries(mask))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
