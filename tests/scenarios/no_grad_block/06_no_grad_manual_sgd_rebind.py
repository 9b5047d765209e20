"""Manual gradient descent for logistic regression: the update is written as
`w = w - lr * w.grad` inside `torch.no_grad()`. That rebinds `w` to a new tensor
that does not require grad, so the second iteration's backward() raises.
"""
import torch

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "w"
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    X = torch.randn(40, 3)
    y = (X[:, 0] - X[:, 1] > 0).float()
    w = torch.zeros(3, requires_grad=True)
    lr = 0.5
    for it in range(3):
        p = torch.sigmoid(X @ w)
        loss = torch.nn.functional.binary_cross_entropy(p, y)
        loss.backward()
        with torch.no_grad():
            w = w - lr * w.grad  # <-- CUT
    return {"w": w, "loss": loss}
