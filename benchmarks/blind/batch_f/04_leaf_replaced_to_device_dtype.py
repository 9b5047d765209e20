"""Reproduces pytorch/pytorch#13112: `a = torch.tensor([...], requires_grad=True).to(device)`
gives a.grad None on the GPU run. `.to()` returns a copy whose name replaces the leaf; here the
copy is made by the dtype part of the move (the config asks for float64), so the same happens
on CPU: the polynomial coefficients `a` are a non-leaf and a.grad stays None.
"""
import torch

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "a"
EXPECT = "grad_none"

CONFIG = {"device": "cpu", "dtype": "float64"}


def poly_fit_loss(a, xs, ys):
    powers = torch.stack([xs ** k for k in range(a.shape[0])], dim=1)
    return ((powers @ a - ys) ** 2).mean()


def run():
    torch.manual_seed(0)
    device = torch.device(CONFIG["device"])
    dtype = getattr(torch, CONFIG["dtype"])
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True).to(device, dtype)  # <-- CUT
    xs = torch.linspace(-1, 1, 20, dtype=dtype, device=device)
    ys = 0.5 - xs + 2 * xs ** 2 + 0.01 * torch.randn(20, dtype=dtype)
    b = torch.zeros(1, dtype=dtype, device=device, requires_grad=True)
    loss = poly_fit_loss(a, xs, ys) + (b ** 2).sum() + 0.1 * b.sum()
    loss.backward()
    return {"a": a, "b": b, "loss": loss, "xs": xs}
