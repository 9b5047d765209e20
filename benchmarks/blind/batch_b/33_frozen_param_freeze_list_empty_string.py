"""YOLOv5-style layer freezing (ultralytics/yolov5#1213 discusses this loop):
freeze = [''] is meant as "freeze nothing", but `any(x in k for x in freeze)` is
True for every parameter name because '' is a substring of every string. The
whole detector is frozen and loss.backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Detect(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.SiLU(),
                                   nn.Conv2d(8, 8, 3, padding=1), nn.SiLU(),
                                   nn.Conv2d(8, 3 * (5 + 2), 1))

    def forward(self, x):
        return self.model(x)


def train(opt_freeze):
    model = Detect()
    freeze = ['model.%s.' % x for x in opt_freeze] if opt_freeze else ['', ]  # parameter names to freeze (full or partial)
    for k, v in model.named_parameters():
        v.requires_grad = True  # train all layers
        if any(x in k for x in freeze):
            v.requires_grad = False  # <-- CUT
    optimizer = torch.optim.SGD([v for v in model.parameters()], lr=0.01, momentum=0.937, nesterov=True)
    imgs = torch.randn(2, 3, 16, 16)
    targets = torch.rand(2, 21, 8, 8)
    pred = model(imgs)
    loss = F.binary_cross_entropy_with_logits(pred, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return model, loss


def run():
    torch.manual_seed(0)
    model, loss = train(opt_freeze=[])
    return {"model": model, "loss": loss}
