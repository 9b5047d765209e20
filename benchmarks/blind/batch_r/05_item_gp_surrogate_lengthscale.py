"""Bayesian-optimisation surrogate: a hand-written GP whose RBF kernel reads the lengthscale
as a Python float (`float(self.log_ls.exp())`) to build the kernel "faster". The marginal
likelihood still trains the noise term, but log_ls never gets a gradient.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "gp.log_ls"
EXPECT = "grad_none"


class ExactGP(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_ls = nn.Parameter(torch.tensor(0.0))
        self.log_sf = nn.Parameter(torch.tensor(0.0))
        self.log_noise = nn.Parameter(torch.tensor(-2.0))

    def kernel(self, a, b):
        ls = float(self.log_ls.exp())  # <-- CUT
        d2 = (a[:, None, :] - b[None, :, :]).pow(2).sum(-1)
        return self.log_sf.exp() * torch.exp(-0.5 * d2 / ls ** 2)

    def neg_mll(self, x, y):
        n = x.shape[0]
        K = self.kernel(x, x) + self.log_noise.exp() * torch.eye(n)
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(y[:, None], L)
        return 0.5 * (y[None, :] @ alpha).squeeze() + torch.log(torch.diagonal(L)).sum() + 0.5 * n * float(np.log(2 * np.pi))


def run():
    torch.manual_seed(0)
    x = torch.rand(12, 1) * 4
    y = torch.sin(2 * x[:, 0]) + 0.05 * torch.randn(12)
    gp = ExactGP()
    opt = torch.optim.Adam(gp.parameters(), lr=0.05)
    loss = gp.neg_mll(x, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"gp": gp, "opt": opt, "loss": loss}
