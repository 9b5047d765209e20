"""Faster R-CNN box head trained with a hand-written CIoU loss. One RPN proposal is degenerate
(y1 == y2), so its decoded box has height 0 and atan(w / h) divides by zero. The forward value is
finite (atan(inf) = pi/2) and the invalid proposal is masked out of the mean, but the backward of
w / h is 0 / 0, so bbox_pred.weight.grad is nan. The no_grad around the CIoU alpha is deliberate.
"""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "head.bbox_pred.weight"
EXPECT = "grad_nonfinite"

CFG = {"roi_size": 4, "channels": 8, "loss_weight": 2.0}


class ConvFCBBoxHead(nn.Module):
    def __init__(self, c, r):
        super().__init__()
        self.shared_fc = nn.Linear(c * r * r, 32)
        self.cls_score = nn.Linear(32, 3)
        self.bbox_pred = nn.Linear(32, 4)

    def forward(self, roi_feats):
        x = torch.relu(self.shared_fc(roi_feats.flatten(1)))
        return self.cls_score(x), self.bbox_pred(x) * 0.1


def decode(rois, deltas):
    w = rois[:, 2] - rois[:, 0]
    h = rois[:, 3] - rois[:, 1]
    cx = rois[:, 0] + 0.5 * w
    cy = rois[:, 1] + 0.5 * h
    dx, dy, dw, dh = deltas.unbind(1)
    return cx + dx * w, cy + dy * h, w * torch.exp(dw), h * torch.exp(dh)


def to_xyxy(cx, cy, w, h):
    return cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h


def ciou_loss(pred, target, eps=1e-7):
    pcx, pcy, pw, ph = pred
    tcx, tcy, tw, th = target
    px1, py1, px2, py2 = to_xyxy(pcx, pcy, pw, ph)
    tx1, ty1, tx2, ty2 = to_xyxy(tcx, tcy, tw, th)
    iw = (torch.min(px2, tx2) - torch.max(px1, tx1)).clamp(min=0)
    ih = (torch.min(py2, ty2) - torch.max(py1, ty1)).clamp(min=0)
    inter = iw * ih
    iou = inter / (pw * ph + tw * th - inter + eps)
    cw = torch.max(px2, tx2) - torch.min(px1, tx1)
    chh = torch.max(py2, ty2) - torch.min(py1, ty1)
    rho2 = (pcx - tcx) ** 2 + (pcy - tcy) ** 2
    c2 = cw ** 2 + chh ** 2 + eps
    v = (4 / torch.pi ** 2) * (torch.atan(tw / th) - torch.atan(pw / ph)) ** 2  # <-- CUT
    with torch.no_grad():
        alpha = v / (1 - iou + v + eps)
    return 1 - iou + rho2 / c2 + alpha * v


def run():
    torch.manual_seed(0)
    head = ConvFCBBoxHead(CFG["channels"], CFG["roi_size"])
    opt = torch.optim.SGD(head.parameters(), lr=0.01, momentum=0.9)
    rois = torch.tensor([[10.0, 12.0, 60.0, 70.0],
                         [200.0, 599.0, 300.0, 599.0],   # degenerate RPN proposal
                         [30.0, 40.0, 90.0, 85.0],
                         [5.0, 5.0, 25.0, 45.0]])
    gt = torch.tensor([[12.0, 10.0, 58.0, 72.0],
                       [205.0, 590.0, 290.0, 610.0],
                       [28.0, 42.0, 95.0, 80.0],
                       [6.0, 4.0, 27.0, 40.0]])
    labels = torch.tensor([1, 2, 1, 0])
    roi_feats = torch.randn(4, CFG["channels"], CFG["roi_size"], CFG["roi_size"])

    cls_score, deltas = head(roi_feats)
    pred = decode(rois, deltas)
    gw, gh = gt[:, 2] - gt[:, 0], gt[:, 3] - gt[:, 1]
    target = (gt[:, 0] + 0.5 * gw, gt[:, 1] + 0.5 * gh, gw, gh)
    loss_box = ciou_loss(pred, target)
    valid = (rois[:, 2] > rois[:, 0]) & (rois[:, 3] > rois[:, 1]) & (labels > 0)
    loss_box = torch.where(valid, loss_box, torch.zeros_like(loss_box)).sum() / valid.sum()
    loss_cls = nn.functional.cross_entropy(cls_score, labels)
    loss = loss_cls + CFG["loss_weight"] * loss_box
    opt.zero_grad()
    loss.backward()
    return {"head": head, "opt": opt, "loss": loss, "loss_box": loss_box, "pred": pred}
