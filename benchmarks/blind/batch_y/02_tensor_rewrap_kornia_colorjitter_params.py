"""Learnable color augmentation: MyAug holds nn.Parameter parameters_aug and builds a kornia-style
ColorJitter from its entries. The jitter's range helper normalizes each factor with torch.tensor(...),
which copies the value and drops the graph, so the CNN trains but aug.parameters_aug.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "aug.parameters_aug"
EXPECT = "grad_none"


def _range_bound(factor, center=1.0, bounds=(0.0, 2.0)):
    factor = torch.tensor(factor, dtype=torch.float32)  # <-- CUT
    lo = torch.clamp(center - factor, bounds[0], bounds[1])
    hi = torch.clamp(center + factor, bounds[0], bounds[1])
    return torch.stack([lo, hi])


class ColorJitter(nn.Module):
    def __init__(self, brightness, contrast, saturation, hue, same_on_batch=True):
        super().__init__()
        self.brightness = _range_bound(brightness)
        self.contrast = _range_bound(contrast)
        self.saturation = _range_bound(saturation)
        self.hue = _range_bound(hue, center=0.0, bounds=(-0.5, 0.5))
        self.same_on_batch = same_on_batch

    @staticmethod
    def _sample(bound, u):
        return bound[0] + (bound[1] - bound[0]) * u

    def forward(self, x):
        u = torch.linspace(0.2, 0.8, 4)
        b = self._sample(self.brightness, u[0])
        c = self._sample(self.contrast, u[1])
        s = self._sample(self.saturation, u[2])
        x = (x * b).clamp(0, 1)
        mean = x.mean(dim=(1, 2, 3), keepdim=True)
        x = ((x - mean) * c + mean).clamp(0, 1)
        gray = x.mean(dim=1, keepdim=True)
        x = ((x - gray) * s + gray).clamp(0, 1)
        return x


class MyAug(nn.Module):
    def __init__(self):
        super().__init__()
        self.parameters_aug = nn.Parameter(torch.tensor([0.1, 0.1, 0.1, 0.0, 0.1]))
        self.jit = ColorJitter(self.parameters_aug[0], self.parameters_aug[1],
                               self.parameters_aug[2], self.parameters_aug[3])

    def forward(self, x):
        return self.jit(x)


def run():
    torch.manual_seed(0)
    cnn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                        nn.Flatten(), nn.Linear(8, 10))
    aug = MyAug()
    opt = torch.optim.Adam(list(cnn.parameters()) + list(aug.parameters()), lr=1e-3)
    images = torch.rand(4, 3, 16, 16)
    labels = torch.tensor([1, 3, 5, 7])
    with torch.enable_grad():
        logits = cnn(aug(images))
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"cnn": cnn, "aug": aug, "opt": opt, "loss": loss}
