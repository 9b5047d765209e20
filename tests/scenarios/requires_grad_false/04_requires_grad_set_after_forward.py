"""Saliency map: the input image is marked with img.requires_grad_() only after
the forward pass has already run. The recorded graph does not contain img, so
img.grad is None after backward.
"""
import torch
import torch.nn as nn

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "img"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 5))
    img = torch.rand(1, 3, 6, 6)  # <-- CUT
    scores = model(img)
    img.requires_grad_()
    scores[0, scores.argmax()].backward()
    return {"model": model, "img": img, "scores": scores}
