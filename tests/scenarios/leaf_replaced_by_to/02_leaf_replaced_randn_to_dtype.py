"""Plain-tensor logistic regression: weights are created with
torch.randn(..., requires_grad=True).to(torch.float64) (the usual ".cuda()" mistake
with a dtype move). `w` is the non-leaf copy, so w.grad is None.
"""
import torch

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "w"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    X = torch.randn(30, 4, dtype=torch.float64)
    y = (X[:, 0] > 0).double()
    w = torch.randn(4, requires_grad=True).to(torch.float64)  # <-- CUT
    b = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    p = torch.sigmoid(X @ w + b)
    loss = torch.nn.functional.binary_cross_entropy(p, y)
    loss.backward()
    return {"w": w, "b": b, "loss": loss}
