"""Logistic regression written by hand: the bias is created with
requires_grad=True but the weight matrix is a plain torch.randn(...) * 0.01.
backward runs (the bias gets a gradient), the manual SGD update silently skips
the weight: W.grad is None.
Thread: SO "RuntimeError: element 0 of tensors does not require grad..." (recalled).
"""
import torch

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "W"
EXPECT = "grad_none"


def make_params(n_features, n_classes):
    W = torch.randn(n_features, n_classes) * 0.01  # <-- CUT
    b = torch.zeros(n_classes, requires_grad=True)
    return W, b


def sgd_update(params, lr):
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p -= lr * p.grad
                p.grad.zero_()


def run():
    torch.manual_seed(0)
    X = torch.randn(50, 4)
    y = (X[:, 0] + X[:, 1] > 0).long()
    W, b = make_params(4, 2)
    logits = X @ W + b
    loss = torch.nn.functional.cross_entropy(logits, y)
    loss.backward()
    b_grad = b.grad.clone()
    sgd_update([W, b], lr=0.5)
    return {"W": W, "b": b, "loss": loss, "b_grad": b_grad}
