"""Plain-tensor softmax regression: the bias is created with torch.zeros and then
`b.requires_grad_` is written without the call parentheses, which does nothing.
W trains, b never requires grad and b.grad is None.
"""
import torch
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "b"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    X = torch.randn(40, 3)
    y = torch.randint(0, 3, (40,))
    W = torch.randn(3, 3, requires_grad=True)
    b = torch.zeros(3)  # <-- CUT
    b.requires_grad_
    for _ in range(2):
        loss = F.cross_entropy(X @ W + b, y)
        loss.backward()
        with torch.no_grad():
            W -= 0.1 * W.grad
        W.grad.zero_()
    loss = F.cross_entropy(X @ W + b, y)
    loss.backward()
    return {"W": W, "b": b, "loss": loss}
