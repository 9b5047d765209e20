"""PGD attack whose projection step was written with numpy (np.clip to the
eps-ball and to [0, 1]) before feeding the image back as torch.from_numpy.
backward() runs (the classifier's weights still require grad) but delta.grad
is None, so every PGD step raises on delta.grad.sign() later.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "delta"
EXPECT = "grad_none"


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 8 * 8, 10)

    def forward(self, x):
        return self.fc(F.relu(self.conv(x)).flatten(1))


class PGD:
    def __init__(self, model, eps=8 / 255, alpha=2 / 255):
        self.model, self.eps, self.alpha = model, eps, alpha

    def project(self, x, delta):
        d = np.clip(delta.detach().cpu().numpy(), -self.eps, self.eps)  # <-- CUT
        adv = np.clip(x.numpy() + d, 0.0, 1.0)
        return torch.from_numpy(adv).float()

    def step(self, x, y, delta):
        adv = self.project(x, delta)
        loss = F.cross_entropy(self.model(adv), y)
        self.model.zero_grad()
        loss.backward()
        return loss


def run():
    torch.manual_seed(0)
    model = SmallCNN().eval()
    x = torch.rand(4, 1, 8, 8)
    y = torch.randint(0, 10, (4,))
    delta = torch.empty_like(x).uniform_(-8 / 255, 8 / 255).requires_grad_(True)
    attack = PGD(model)
    loss = attack.step(x, y, delta)
    return {"delta": delta, "model": model, "loss": loss}
