"""Box regression with an IoU loss: each rectangle is rasterised into a 0/1
score map by comparing a pixel grid with the predicted corners, and the
intersection/union are sums of the masks. Backward runs (the class head has a
normal loss) but the box head's grads are None everywhere (pytorch/pytorch#2774).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.box_head.weight"
EXPECT = "grad_none"


class IoULoss(nn.Module):
    def __init__(self, size=16):
        super().__init__()
        ys, xs = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
        self.register_buffer("grid", torch.stack([xs, ys], dim=-1))  # H, W, 2

    def score_map(self, box):
        x1, y1, x2, y2 = box
        gx, gy = self.grid[..., 0], self.grid[..., 1]
        inside = (gx >= x1) & (gx <= x2) & (gy >= y1) & (gy <= y2)  # <-- CUT
        return inside.float()

    def forward(self, pred_boxes, gt_boxes):
        losses = []
        for p, g in zip(pred_boxes, gt_boxes):
            mp, mg = self.score_map(p), self.score_map(g)
            inter = (mp * mg).sum()
            union = (mp + mg - mp * mg).sum().clamp(min=1.0)
            losses.append(1.0 - inter / union)
        return torch.stack(losses).mean()


class Detector(nn.Module):
    def __init__(self, n_cls=3):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.box_head = nn.Linear(8, 4)
        self.cls_head = nn.Linear(8, n_cls)

    def forward(self, x):
        f = self.features(x)
        return torch.sigmoid(self.box_head(f)) * 16, self.cls_head(f)


def run():
    torch.manual_seed(0)
    model = Detector()
    iou_loss = IoULoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(2, 3, 16, 16)
    gt_boxes = torch.tensor([[2.0, 3.0, 10.0, 12.0], [5.0, 1.0, 14.0, 9.0]])
    labels = torch.tensor([0, 2])
    boxes, logits = model(images)
    loss = iou_loss(boxes, gt_boxes) + F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
