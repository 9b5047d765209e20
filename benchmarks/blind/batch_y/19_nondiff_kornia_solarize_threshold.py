"""Differentiable augmentation policy (Faster-AutoAugment style) built from kornia.enhance-like ops.
The brightness magnitude is learned fine, but solarize is written as torch.where(x < threshold, x,
1 - x): the learnable threshold only enters through the comparison, so policy.solarize.threshold.grad
is None. The policy's magnitudes are logged with .item().
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.solarize.threshold"
EXPECT = "grad_none"


class AdjustBrightness(nn.Module):
    def __init__(self, init=0.1):
        super().__init__()
        self.magnitude = nn.Parameter(torch.tensor(init))

    def forward(self, x):
        return (x + self.magnitude).clamp(0, 1)


class Solarize(nn.Module):
    def __init__(self, init=0.5):
        super().__init__()
        self.threshold = nn.Parameter(torch.tensor(init))

    def forward(self, x):
        return torch.where(x < self.threshold, x, 1.0 - x)  # <-- CUT


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.brightness = AdjustBrightness()
        self.solarize = Solarize()

    def forward(self, x):
        return self.solarize(self.brightness(x))


def run():
    torch.manual_seed(0)
    policy = Policy()
    classifier = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                               nn.Flatten(), nn.Linear(8, 5))
    opt_policy = torch.optim.Adam(policy.parameters(), lr=1e-3)
    opt_model = torch.optim.SGD(classifier.parameters(), lr=0.05)
    images = torch.rand(4, 3, 12, 12)
    labels = torch.tensor([0, 1, 2, 4])

    loss = F.cross_entropy(classifier(policy(images)), labels)
    opt_policy.zero_grad()
    opt_model.zero_grad()
    loss.backward()
    opt_policy.step()
    opt_model.step()
    log = {"brightness": policy.brightness.magnitude.item(), "threshold": policy.solarize.threshold.item()}
    return {"policy": policy, "classifier": classifier, "loss": loss, "log": log}
