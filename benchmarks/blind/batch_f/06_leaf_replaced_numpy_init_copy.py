"""Reproduces pytorch/pytorch#7335: per-feature scale weights were initialised from a numpy
array as `torch.tensor(np.array(...), dtype=torch.float, requires_grad=True).cuda()`; the
leaf that collects gradients is hidden and the kept name is a copy. With the CPU config the
copy is made by `.to(dtype=torch.float64)`; the learned scales `w.grad` stay None.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "w"
EXPECT = "grad_none"


def load_init_scales(n):
    rng = np.random.default_rng(0)
    return np.abs(rng.normal(1.0, 0.1, size=n))


class ScaledRegressor(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.lin = nn.Linear(n_in, 1).double()

    def forward(self, x, scales):
        return self.lin(x * scales).squeeze(-1)


def run():
    torch.manual_seed(0)
    n_in = 3
    w = torch.tensor(load_init_scales(n_in), dtype=torch.float, requires_grad=True).to(dtype=torch.float64)  # <-- CUT
    model = ScaledRegressor(n_in)
    opt = torch.optim.SGD(list(model.parameters()), lr=0.1)
    x = torch.randn(16, n_in, dtype=torch.float64)
    y = x @ torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    l = ((model(x, w) - y) ** 2).mean()
    opt.zero_grad()
    l.backward()
    opt.step()
    return {"w": w, "model": model, "l": l}
