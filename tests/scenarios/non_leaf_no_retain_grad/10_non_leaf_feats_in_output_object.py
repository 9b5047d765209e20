"""Grad-CAM on a small CNN whose forward returns an output object holding both
logits and the last conv feature map. The user backprops the class score and
reads out.feats.grad to weight the channels, but feats is a non-leaf and
retain_grad() was never called, so out.feats.grad is None.
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "out.feats"
EXPECT = "grad_none"


class ModelOutput:
    def __init__(self, logits, feats):
        self.logits = logits
        self.feats = feats


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        h = torch.relu(self.conv1(x))
        feats = torch.relu(self.conv2(h))  # <-- CUT
        logits = self.fc(feats.mean(dim=(2, 3)))
        return ModelOutput(logits, feats)


def run():
    torch.manual_seed(0)
    model = SmallCNN()
    model.eval()
    img = torch.rand(1, 3, 8, 8)
    out = model(img)
    cls = int(out.logits.argmax())
    out.logits[0, cls].backward()
    grads = out.feats.grad
    cam = None if grads is None else (grads.mean(dim=(2, 3), keepdim=True) * out.feats).sum(1)
    return {"model": model, "out": out, "img": img, "cam": cam}
