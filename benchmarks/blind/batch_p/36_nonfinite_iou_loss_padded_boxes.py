"""IoU loss for a DETR-style box head on a batch whose ground truth is padded with
all-zero boxes. The padded slots are not masked, and the head's prediction for
them is a zero-size box too, so union = 0 and inter / union = 0/0 = NaN, which
turns the box head's gradient into NaN.
"""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.box_head.weight"
EXPECT = "grad_nonfinite"


class QueryBoxHead(nn.Module):
    def __init__(self, n_queries=4, d=16):
        super().__init__()
        self.queries = nn.Embedding(n_queries, d)
        self.box_head = nn.Linear(d, 4)

    def forward(self, feats):
        h = self.queries.weight[None] + feats.mean(1, keepdim=True)
        cxcywh = torch.sigmoid(self.box_head(h))
        wh = cxcywh[..., 2:] * (cxcywh[..., 2:] > 0.05).float()
        return torch.cat([cxcywh[..., :2] - wh / 2, cxcywh[..., :2] + wh / 2], -1)


def iou_loss(pred, gt):
    lt = torch.max(pred[..., :2], gt[..., :2])
    rb = torch.min(pred[..., 2:], gt[..., 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    area_p = (pred[..., 2] - pred[..., 0]) * (pred[..., 3] - pred[..., 1])
    area_g = (gt[..., 2] - gt[..., 0]) * (gt[..., 3] - gt[..., 1])
    iou = inter / (area_p + area_g - inter)  # <-- CUT
    return (1 - iou).mean()


def run():
    torch.manual_seed(0)
    model = QueryBoxHead()
    with torch.no_grad():
        model.box_head.bias.copy_(torch.tensor([0.0, 0.0, -6.0, -6.0]))
    feats = torch.randn(2, 5, 16) * 0.01
    gt = torch.zeros(2, 4, 4)
    gt[:, 0] = torch.tensor([0.4, 0.4, 0.6, 0.6])
    pred = model(feats)
    loss = iou_loss(pred, gt)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    opt.zero_grad()
    loss.backward()
    return {"model": model, "loss": loss}
