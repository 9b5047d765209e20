"""FGSM attack: the perturbation is added to the image (x_adv = x + delta) and the
attack reads x_adv.grad after backward to get the sign. x_adv is a non-leaf
tensor, so its .grad is None (delta.grad is filled instead).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "x_adv"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 10))
    x = torch.rand(3, 1, 4, 4)
    y = torch.randint(0, 10, (3,))
    delta = torch.zeros_like(x, requires_grad=True)
    x_adv = (x + delta).clamp(0, 1)  # <-- CUT
    loss = F.cross_entropy(model(x_adv), y)
    loss.backward()
    return {"model": model, "x_adv": x_adv, "delta": delta, "loss": loss}
