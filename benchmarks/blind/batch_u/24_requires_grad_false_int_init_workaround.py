"""pytorch/pytorch#53466 (torch.tensor([1], requires_grad=True) fails with "Only Tensors of
floating point and complex dtype can require gradients"): a hand-written logistic
regression hit that error with an integer initial bias, and the user "fixed" it by
dropping requires_grad and casting instead. The bias now never gets a gradient:
b.grad is None while w learns."""
import torch

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "b"
EXPECT = "grad_none"


def fit_step(w, b, x, y, lr=0.1):
    logits = x @ w + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
    loss.backward()
    with torch.no_grad():
        for p in (w, b):
            if p.grad is not None:
                p -= lr * p.grad
    return loss


def run():
    torch.manual_seed(0)
    x = torch.randn(20, 3)
    y = (x[:, 0] > 0).float()
    w = torch.zeros(3, requires_grad=True)
    b = torch.tensor([1]).float()  # <-- CUT
    loss = fit_step(w, b, x, y)
    return {"w": w, "b": b, "loss": loss}
