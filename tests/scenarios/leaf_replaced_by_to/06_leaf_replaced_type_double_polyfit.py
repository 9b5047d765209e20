"""Fitting a cubic with plain tensors: the coefficients are created as a leaf and then
converted with coef = coef.type(torch.DoubleTensor) to match the float64 data.
After backward() coef.grad is None and the manual update crashes on None.
"""
import torch

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "coef"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    x = torch.linspace(-1, 1, 50, dtype=torch.float64)
    y = 2 * x ** 3 - x + 0.1 * torch.randn(50, dtype=torch.float64)
    coef = torch.zeros(4, requires_grad=True)
    coef = coef.type(torch.DoubleTensor)  # <-- CUT
    powers = torch.stack([x ** k for k in range(4)], dim=1)
    pred = powers @ coef
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    return {"coef": coef, "loss": loss}
