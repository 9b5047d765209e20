"""Inspecting gradients of intermediate values (pytorch/pytorch#134398): t3 = t1 + t2
is a non-leaf tensor, so after backward its .grad is None (with the "not a leaf
Tensor" warning) while t1.grad and t2.grad are filled. Here the same thing happens
in a small pricing model where the user checks the gradient of the combined score.
"""
import torch

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "t3"
EXPECT = "grad_none"


def price_model(base, markup, demand):
    t3 = base + markup  # <-- CUT
    revenue = t3 * demand - 0.1 * t3 ** 2
    return t3, revenue


def run():
    torch.manual_seed(0)
    t1 = torch.tensor(5., requires_grad=True)
    t2 = torch.tensor(2., requires_grad=True)
    demand = torch.tensor(3.0)
    t3, revenue = price_model(t1, t2, demand)
    loss = -revenue
    loss.backward()
    report = {"t1": t1.grad, "t2": t2.grad, "t3": t3.grad}
    return {"t1": t1, "t2": t2, "t3": t3, "loss": loss, "report": report}
