"""A detector returns its outputs in a small user-written container class. Its
__init__ normalizes every field with `torch.tensor(v, dtype=torch.float32)` so
lists from the data loader and tensors both work. For the model's box
predictions that is a copy without history, so the box head gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.box_head.weight"
EXPECT = "grad_none"


class Detections:
    """Holds per-image predictions (boxes, class logits)."""

    def __init__(self, boxes, logits):
        self.boxes = torch.tensor(boxes, dtype=torch.float32)  # <-- CUT
        self.logits = logits


class TinyDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(12, 24), nn.ReLU())
        self.box_head = nn.Linear(24, 4)
        self.cls_head = nn.Linear(24, 3)

    def forward(self, x):
        h = self.backbone(x)
        return Detections(self.box_head(h).sigmoid(), self.cls_head(h))


def run():
    torch.manual_seed(0)
    model = TinyDetector()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 12)
    gt_boxes = torch.rand(8, 4)
    gt_cls = torch.randint(0, 3, (8,))
    det = model(x)
    loss = F.smooth_l1_loss(det.boxes, gt_boxes) + F.cross_entropy(det.logits, gt_cls)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
