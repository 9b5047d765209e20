"""Saliency map for one image: the user creates the image tensor with
requires_grad=True and then adds the batch dimension with img = img.unsqueeze(0)
(the in-place img.unsqueeze_(0) had raised the leaf in-place error). The
queried img is now a non-leaf view, so img.grad is None after backward.
Thread: SO "Pytorch - vanilla Gradient Visualization" (input-gradient saliency).
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "img"
EXPECT = "grad_none"


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.fc = nn.Linear(6 * 4 * 4, 10)

    def forward(self, x):
        return self.fc(self.conv(x).flatten(1))


def saliency(model, img, target):
    model.eval()
    score = model(img)[0, target]
    score.backward()
    return img.grad


def run():
    torch.manual_seed(0)
    model = SmallCNN()
    img = torch.rand(3, 8, 8, requires_grad=True)
    img = img.unsqueeze(0)  # <-- CUT
    sal = saliency(model, img, target=3)
    return {"model": model, "img": img, "sal": sal}
