"""Tent-style entropy minimisation written as -(p * log p).sum(): with a very
confident source model some softmax entries underflow to exactly 0, log(0) is
-inf, and the backward of 0 * -inf yields NaN in the BatchNorm affine grads."""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[1].weight"
EXPECT = "grad_nonfinite"


def entropy(logits):
    p = logits.softmax(1)
    logp = torch.log(p)  # <-- CUT
    return -(p * logp).sum(1).mean()


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 4))
    with torch.no_grad():
        model[3].weight.mul_(200.0)
    model.requires_grad_(False)
    model[1].weight.requires_grad_(True)
    model[1].bias.requires_grad_(True)
    opt = torch.optim.SGD([model[1].weight, model[1].bias], lr=1e-3)
    x = torch.randn(8, 6)
    loss = entropy(model(x))
    opt.zero_grad()
    loss.backward()
    return {"model": model, "loss": loss}
