"""FGSM adversarial attack on a CNN: the attack input x_adv is a leaf with
requires_grad, but the user's preprocess() helper normalizes it inside
torch.no_grad() (copied from the eval dataloader). The loss still backprops
into the model weights, yet x_adv.grad stays None and the attack does nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "x_adv"
EXPECT = "grad_none"

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


def preprocess(img):
    with torch.no_grad():
        out = (img - MEAN) / STD  # <-- CUT
    return out


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))
    model.eval()
    img = torch.rand(4, 3, 8, 8)
    y = torch.randint(0, 5, (4,))
    x_adv = img.clone().requires_grad_(True)
    logits = model(preprocess(x_adv))
    loss = F.cross_entropy(logits, y)
    loss.backward()
    eps = 8 / 255
    if x_adv.grad is not None:
        x_adv = (x_adv + eps * x_adv.grad.sign()).clamp(0, 1).detach()
    return {"model": model, "x_adv": x_adv, "img": img, "loss": loss}
