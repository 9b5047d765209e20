"""Segmentation with a main head (cross-entropy) and an auxiliary deep-supervision
head trained with a multi-class Dice loss. The Dice helper one-hot encodes
argmax(logits) so it can share code with the metric, so the auxiliary head gets no
gradient while the main head trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.aux_head.weight"
EXPECT = "grad_none"

N_CLASSES = 3


class SegNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU())
        self.mid = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.aux_head = nn.Conv2d(c, N_CLASSES, 1)
        self.main_head = nn.Conv2d(c, N_CLASSES, 1)

    def forward(self, x):
        s = self.stem(x)
        return self.main_head(self.mid(s)), self.aux_head(s)


def multiclass_dice_loss(logits, target, eps=1e-6):
    pred = F.one_hot(logits.argmax(dim=1), N_CLASSES).permute(0, 3, 1, 2).float()  # <-- CUT
    tgt = F.one_hot(target, N_CLASSES).permute(0, 3, 1, 2).float()
    inter = (pred * tgt).sum(dim=(0, 2, 3))
    union = pred.sum(dim=(0, 2, 3)) + tgt.sum(dim=(0, 2, 3))
    return 1.0 - ((2 * inter + eps) / (union + eps)).mean()


def run():
    torch.manual_seed(0)
    model = SegNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    img = torch.randn(2, 3, 12, 12)
    target = torch.randint(0, N_CLASSES, (2, 12, 12))
    main_logits, aux_logits = model(img)
    loss = F.cross_entropy(main_logits, target) + 0.4 * multiclass_dice_loss(aux_logits, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
