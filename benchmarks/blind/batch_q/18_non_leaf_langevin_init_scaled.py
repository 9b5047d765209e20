"""Langevin sampling for an energy-based model: the chain starts from
`torch.rand(..., requires_grad=True) * 4 - 2`, which is a non-leaf, so after
`energy.sum().backward()` the user reads `x.grad` and finds None (the EBM
parameters do get gradients instead).
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "x"
EXPECT = "grad_none"


class EBM(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(2, 32), nn.SiLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.f(x).squeeze(-1)


class ShortRunChain:
    def __init__(self, n=16, step=0.05):
        self.n, self.step = n, step

    def init(self):
        return torch.rand(self.n, 2, requires_grad=True) * 4 - 2  # <-- CUT

    def first_step(self, ebm):
        x = self.init()
        energy = ebm(x)
        energy.sum().backward()
        return x, energy


def run():
    torch.manual_seed(0)
    ebm = EBM()
    chain = ShortRunChain()
    x, energy = chain.first_step(ebm)
    return {"x": x, "ebm": ebm, "energy": energy}
