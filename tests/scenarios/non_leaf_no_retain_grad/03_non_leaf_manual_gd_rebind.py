"""Manual gradient descent written as `w = w - lr * w.grad`: after the first
update `w` is rebound to a non-leaf result, so in the next iteration w.grad is
None (and the loop crashes on it). Here we stop after the second backward.
"""
import torch

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "w"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    X = torch.randn(20, 2)
    y = X @ torch.tensor([2.0, -1.0])
    w = torch.zeros(2, requires_grad=True)
    lr = 0.1
    for step in range(2):
        loss = ((X @ w - y) ** 2).mean()
        loss.backward()
        if step == 0:
            w = w - lr * w.grad  # <-- CUT
    return {"w": w, "loss": loss}
