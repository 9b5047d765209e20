"""Two-stage (pipeline-style) backward: l2 is trained on a detached copy of
l1's output, and h2.grad is then pushed into l1 with h1.backward(gradient=...).
x is created as `torch.randn(..., requires_grad=True).cuda(0)` (here a float64
cast), so the name x points at the copy and x.grad is None
(pytorch/pytorch#8287).
"""
import torch
import torch.nn as nn

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "x"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    dtype = torch.float64  # stands in for .cuda(0) on this CPU-only box
    x = torch.randn(2, 2, requires_grad=True).to(dtype)  # <-- CUT
    t = torch.randn(2, 2).to(dtype)
    loss_func = nn.MSELoss()
    l1 = nn.Sequential(*[nn.Linear(2, 2) for _ in range(3)]).to(dtype)
    l2 = nn.Sequential(*[nn.Linear(2, 2) for _ in range(3)]).to(dtype)
    h1 = l1(x)
    h2 = h1.detach().requires_grad_()
    h3 = l2(h2)
    l = loss_func(h3, t)
    l.backward()
    h1.backward(gradient=h2.grad)
    return {"x": x, "h2": h2, "l1": l1, "l2": l2, "loss": l}
