"""Segmentation net with a mask head and a boundary head. The boundary loss is a
"soft" IoU written on thresholded predictions `(sigmoid(b) > 0.5).float()`, so
the boundary head gets no gradient while the mask head's BCE still trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.edge_head.weight"
EXPECT = "grad_none"


class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.mask_head = nn.Conv2d(8, 1, 1)
        self.edge_head = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        f = self.backbone(x)
        return {"mask": self.mask_head(f), "edge": self.edge_head(f)}


def iou_loss(logits, target):
    pred = (torch.sigmoid(logits) > 0.5).float()  # <-- CUT
    inter = (pred * target).sum((1, 2, 3))
    union = (pred + target - pred * target).sum((1, 2, 3))
    return (1 - (inter + 1) / (union + 1)).mean()


def run():
    torch.manual_seed(0)
    model = SegNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(2, 3, 8, 8)
    mask_t = (torch.rand(2, 1, 8, 8) > 0.5).float()
    edge_t = (torch.rand(2, 1, 8, 8) > 0.8).float()
    out = model(x)
    loss = F.binary_cross_entropy_with_logits(out["mask"], mask_t) + iou_loss(out["edge"], edge_t)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
