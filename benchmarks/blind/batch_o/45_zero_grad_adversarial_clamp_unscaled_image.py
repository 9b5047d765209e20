"""Adversarial example search on an image loaded in [0, 255] while the attack's
forward clamps the perturbed input to [0, 1] "to stay a valid image". Every
pixel is saturated by the clamp, so the perturbation's gradient is all zeros
and the attack never moves.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "attack.delta"
EXPECT = "grad_zero"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        return self.fc(F.relu(self.conv(x)).mean((2, 3)))


class Attack(nn.Module):
    def __init__(self, shape, eps=8.0):
        super().__init__()
        self.delta = nn.Parameter(torch.zeros(shape))
        self.eps = eps

    def forward(self, model, image):
        adv = (image + self.delta).clamp(0.0, 1.0)  # <-- CUT
        return model(adv)


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    image = torch.from_numpy(rng.integers(30, 256, size=(1, 3, 8, 8)).astype(np.float32))
    model = Net().eval().requires_grad_(False)
    attack = Attack(image.shape)
    opt = torch.optim.Adam(attack.parameters(), lr=1.0)
    target = torch.tensor([2])
    loss = F.cross_entropy(attack(model, image), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"attack": attack, "loss": loss}
