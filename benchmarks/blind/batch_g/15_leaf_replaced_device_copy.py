"""Learnable input warping: the warp offsets are created with requires_grad=True and
then moved with `a = a.to(device=cfg["device"], dtype=cfg["dtype"])` (on the
reporter's machine this was `.cuda()`; here the run config asks for float64).
The name now refers to the copy, a non-leaf, so `a.grad` is None after backward.
"""
import torch
import torch.nn as nn

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "a"
EXPECT = "grad_none"

CFG = {"device": "cpu", "dtype": "float64", "lr": 0.05, "steps": 1}


def resolve_dtype(name):
    return {"float32": torch.float32, "float64": torch.float64}[name]


def make_params(cfg):
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = a.to(device=cfg["device"], dtype=resolve_dtype(cfg["dtype"]))  # <-- CUT
    return a


def objective(a, x):
    warped = x + a[None, :] * torch.sin(x)
    return (warped ** 2).mean()


def run():
    torch.manual_seed(0)
    a = make_params(CFG)
    x = torch.randn(10, 3, dtype=resolve_dtype(CFG["dtype"]))
    for _ in range(CFG["steps"]):
        loss = objective(a, x)
        loss.backward()
        if a.grad is not None:
            with torch.no_grad():
                a -= CFG["lr"] * a.grad
    return {"a": a, "loss": loss}
