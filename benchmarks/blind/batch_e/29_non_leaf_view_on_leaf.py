"""Reshaping a freshly created leaf (pytorch/pytorch#1479): the coefficient vector is
created with requires_grad=True and immediately reshaped with .view(3, 1) on the
same line. The name now refers to the view, a non-leaf, so b.grad is None after
backward; applying the view to the data before setting requires_grad works.
"""
import torch

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "b"
EXPECT = "grad_none"


def make_params():
    a = torch.tensor([1., 2., 3.]).view(1, 3)
    b = torch.tensor([4., 5., 6.], requires_grad=True).view(3, 1)  # <-- CUT
    return a, b


def fit_step(a, b, x):
    c = a.mm(b).sum() * x
    loss = (c - 10.0) ** 2
    loss.backward()
    return loss


def run():
    torch.manual_seed(0)
    a, b = make_params()
    x = torch.tensor(0.5)
    loss = fit_step(a, b, x)
    return {"a": a, "b": b, "loss": loss}
