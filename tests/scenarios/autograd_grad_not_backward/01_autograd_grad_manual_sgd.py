"""Manual SGD on plain tensors: gradients are computed with
torch.autograd.grad(loss, [w, b]) and applied under no_grad. The logging code
later reads w.grad for a gradient-norm plot, which is None.
"""
import torch

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "w"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    X = torch.randn(25, 3)
    y = X @ torch.tensor([1.0, -2.0, 0.5]) + 0.3
    w = torch.zeros(3, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    for _ in range(3):
        loss = ((X @ w + b - y) ** 2).mean()
        gw, gb = torch.autograd.grad(loss, [w, b], create_graph=False)  # <-- CUT
        with torch.no_grad():
            w -= 0.1 * gw
            b -= 0.1 * gb
    return {"w": w, "b": b, "loss": loss}
