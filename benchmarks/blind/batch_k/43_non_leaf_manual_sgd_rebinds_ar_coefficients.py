"""Autoregressive AR(3) model fitted with hand-written gradient descent on plain tensors.
`phi -= lr * phi.grad` raised "a leaf Variable that requires grad is being used in an in-place
operation", so it became phi = phi - lr * g (with a None fallback for g added later): phi is a non-leaf, phi.grad is None.
"""
import torch

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "fit['phi']"
EXPECT = "grad_none"


def lagged(series, p):
    X = torch.stack([series[p - k - 1:len(series) - k - 1] for k in range(p)], 1)
    return X, series[p:]


def fit_ar(series, p=3, lr=0.05, epochs=3):
    X, y = lagged(series, p)
    phi = torch.zeros(p, requires_grad=True)
    c = torch.zeros(1, requires_grad=True)
    history = []
    for epoch in range(epochs):
        loss = ((X @ phi + c - y) ** 2).mean()
        loss.backward()
        history.append(loss.item())
        g = phi.grad if phi.grad is not None else torch.zeros_like(phi)
        phi = phi - lr * g  # <-- CUT
        with torch.no_grad():
            c -= lr * c.grad
            c.grad.zero_()
    return {"phi": phi, "c": c, "history": history}


def run():
    torch.manual_seed(0)
    e = torch.randn(120) * 0.1
    s = torch.zeros(120)
    for t in range(3, 120):
        s[t] = 0.6 * s[t - 1] - 0.2 * s[t - 2] + 0.1 * s[t - 3] + e[t]
    fit = fit_ar(s)
    return {"fit": fit}
