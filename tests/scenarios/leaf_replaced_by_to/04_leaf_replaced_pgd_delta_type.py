"""PGD adversarial training on a model that was converted with .double(): the
perturbation is created with requires_grad=True and then rebound with
`delta = delta.type(torch.float64)` to match. The attack reads delta.grad after
backward, but the rebound delta is not a leaf, so its .grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "delta"
EXPECT = "grad_none"


def pgd_first_step(model, x, y, eps=0.03):
    delta = torch.zeros_like(x).uniform_(-eps, eps).requires_grad_(True)
    delta = delta.type(torch.float64)  # <-- CUT
    loss = F.cross_entropy(model(x.double() + delta), y)
    loss.backward()
    return delta, loss


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 32), nn.ReLU(), nn.Linear(32, 10)).double()
    x = torch.rand(4, 3, 8, 8)
    y = torch.randint(0, 10, (4,))
    delta, loss = pgd_first_step(model, x, y)
    return {"model": model, "delta": delta, "loss": loss}
