"""Sensitivity check of a fixed weighting profile: the input is created with
requires_grad=True and moved in the same expression (.cuda() in the report; here
.to(DEVICE, torch.float64) for the double-precision check). The name now points at the
moved copy, a non-leaf, so after y.backward(...) x.grad is None.
"""
import torch

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "x"
EXPECT = "grad_none"

DEVICE = "cpu"
DTYPE = torch.float64


def weighting_profile(n):
    return torch.linspace(1, 10, n, dtype=DTYPE, device=DEVICE)


def run():
    torch.manual_seed(0)
    x = torch.ones(10, requires_grad=True).to(DEVICE, DTYPE)  # <-- CUT
    w = weighting_profile(10)
    y = x * w
    y.backward(torch.ones(10, dtype=DTYPE, device=DEVICE))
    expected = w.clone()
    return {"x": x, "y": y, "expected": expected}
