"""FGSM on a uint8-style image: the user creates the input leaf with
requires_grad=True and divides by 255 on the same line, so the tensor kept as
`image` is a non-leaf. After backward image.grad is None (with a warning) and
image.grad.sign() fails.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "image"
EXPECT = "grad_none"


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(2)
        self.fc = nn.Linear(24, 10)

    def forward(self, x):
        return self.fc(self.pool(F.relu(self.conv(x))).flatten(1))


def fgsm(model, image, label, eps):
    loss = F.cross_entropy(model(image), label)
    model.zero_grad()
    loss.backward()
    return loss


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, size=(1, 3, 8, 8)).astype(np.float32)
    model = Classifier().eval()
    for p in model.parameters():
        p.requires_grad_(False)
    image = torch.tensor(raw, requires_grad=True) / 255.0  # <-- CUT
    label = torch.tensor([3])
    loss = fgsm(model, image, label, eps=0.03)
    return {"image": image, "model": model, "loss": loss}
