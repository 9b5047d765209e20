"""Control: manual SGD on plain tensors, updating with w.data = w.data - lr * w.grad
and zeroing w.grad after each step. The last iteration's gradient is present and
nonzero; the .data writes are benign here.
"""
import torch

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "w"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    X = torch.randn(32, 3)
    y = X @ torch.tensor([1.0, -2.0, 0.5]) + 0.3
    w = torch.zeros(3, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    lr = 0.1
    for step in range(3):
        if w.grad is not None:
            w.grad.zero_()
            b.grad.zero_()
        loss = ((X @ w + b - y) ** 2).mean()  # <-- CUT
        loss.backward()
        w.data = w.data - lr * w.grad
        b.data = b.data - lr * b.grad
    return {"w": w, "b": b, "loss": loss}
