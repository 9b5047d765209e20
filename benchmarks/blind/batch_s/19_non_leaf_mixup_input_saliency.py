"""Mixup saliency analysis: the user wants the input gradient of the MIXED batch
to see which source image the model relies on. x_mix = lam*x1 + (1-lam)*x2 is
built from leaves that require grad, so x_mix is a non-leaf and x_mix.grad is
None after backward (x1.grad and x2.grad are filled)."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "x_mix"
EXPECT = "grad_none"


def mixup(x1, x2, y1, y2, lam):
    x_mix = lam * x1 + (1.0 - lam) * x2  # <-- CUT
    y_mix = lam * y1 + (1.0 - lam) * y2
    return x_mix, y_mix


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    lam = float(rng.beta(0.4, 0.4))
    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 12), nn.ReLU(), nn.Linear(12, 3))
    x1 = torch.rand(4, 1, 4, 4, requires_grad=True)
    x2 = torch.rand(4, 1, 4, 4, requires_grad=True)
    y1 = F.one_hot(torch.randint(0, 3, (4,)), 3).float()
    y2 = F.one_hot(torch.randint(0, 3, (4,)), 3).float()
    x_mix, y_mix = mixup(x1, x2, y1, y2, lam)
    loss = -(y_mix * F.log_softmax(model(x_mix), 1)).sum(1).mean()
    loss.backward()
    return {"model": model, "x1": x1, "x2": x2, "x_mix": x_mix, "loss": loss}
