"""Scaling a learnable vector by 2 "without tracking the scaling" via
with torch.no_grad(): a = a * 2. The rebound `a` no longer requires grad, so
loss.backward() raises "element 0 of tensors does not require grad".
"""
import torch

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "a"
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    x = torch.randn(8, 3)
    a = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        a = a * 2  # <-- CUT
    loss = (x @ a).pow(2).mean()
    loss.backward()
    return {"a": a, "loss": loss}
