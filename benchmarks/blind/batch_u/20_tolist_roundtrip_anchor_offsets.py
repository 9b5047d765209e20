"""A detector decodes predicted box offsets per anchor with Python arithmetic on
offsets.tolist() (the round trip behind pytorch/pytorch#7095, tensor.tolist docs) and
rebuilds the boxes with torch.tensor(...) for the IoU-style loss. The loss is made to
"require grad" through a learnable box scale, so backward() runs, but the regression
head gets no gradient: model.reg.weight.grad is None."""
import torch
import torch.nn as nn

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.reg.weight"
EXPECT = "grad_none"


class Detector(nn.Module):
    def __init__(self, d=10, n_anchors=3):
        super().__init__()
        self.n_anchors = n_anchors
        self.reg = nn.Linear(d, 4 * n_anchors)
        self.log_scale = nn.Parameter(torch.zeros(1))

    def forward(self, feats):
        return self.reg(feats).view(-1, self.n_anchors, 4)


def decode(offsets, anchors):
    rows = offsets.tolist()  # <-- CUT
    boxes = []
    for per_img in rows:
        for (dx, dy, dw, dh), (ax, ay, aw, ah) in zip(per_img, anchors):
            boxes.append([ax + dx * aw, ay + dy * ah, aw * (1 + dw), ah * (1 + dh)])
    return torch.tensor(boxes)


def run():
    torch.manual_seed(0)
    model = Detector()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    anchors = [(0.2, 0.2, 0.1, 0.1), (0.5, 0.5, 0.2, 0.2), (0.7, 0.3, 0.3, 0.1)]
    feats = torch.randn(2, 10)
    gt = torch.rand(6, 4)
    boxes = decode(model(feats), anchors) * model.log_scale.exp()
    loss = (boxes - gt).abs().sum(-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
