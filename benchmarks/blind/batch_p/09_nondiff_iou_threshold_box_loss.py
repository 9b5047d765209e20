"""Anchor-based detector head: boxes are decoded from anchor offsets and the box
loss is written as 1 - mean(IoU > 0.5), i.e. the matching rule reused as a loss.
The comparison has no gradient, so the box-regression head gets none; the
objectness head still trains from its BCE loss.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.box_head.weight"
EXPECT = "grad_none"


def box_iou_aligned(a, b):
    lt = torch.max(a[:, :2], b[:, :2])
    rb = torch.min(a[:, 2:], b[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(dim=1)
    area = lambda x: (x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1])
    return inter / (area(a) + area(b) - inter + 1e-7)


def decode(anchors, deltas):
    wh = anchors[:, 2:] - anchors[:, :2]
    ctr = anchors[:, :2] + 0.5 * wh + deltas[:, :2] * wh
    wh = wh * torch.exp(deltas[:, 2:].clamp(max=4.0))
    return torch.cat([ctr - 0.5 * wh, ctr + 0.5 * wh], dim=1)


class DetHead(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, c), nn.ReLU())
        self.obj_head = nn.Linear(c, 1)
        self.box_head = nn.Linear(c, 4)

    def forward(self, f):
        h = self.trunk(f)
        return self.obj_head(h).squeeze(-1), self.box_head(h)


def run():
    torch.manual_seed(0)
    model = DetHead()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xy = torch.rand(20, 2) * 10
    anchors = torch.cat([xy, xy + 2.0], dim=1)
    gt = anchors + torch.randn(20, 4) * 0.3
    feats = torch.randn(20, 8)
    obj_logit, deltas = model(feats)
    pred_boxes = decode(anchors, deltas)
    iou_anchor = box_iou_aligned(anchors, gt)
    pos = (iou_anchor > 0.4).float()
    obj_loss = F.binary_cross_entropy_with_logits(obj_logit, pos)
    box_loss = 1.0 - (box_iou_aligned(pred_boxes, gt) > 0.5).float().mean()  # <-- CUT
    loss = obj_loss + 2.0 * box_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
