"""Bayesian optimisation: the next query point is found by gradient ascent on Expected
Improvement. The GP surrogate was fitted in float64, so the candidate leaf is converted with
`x_cand = x_cand.double()`. The name now points at a non-leaf copy, and the user's
`x_cand.grad` (read to check the EI gradient before the step) is None.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import numpy as np
import torch

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "x_cand"
EXPECT = "grad_none"


class FittedGP:
    def __init__(self, X, y, ls=0.5, noise=1e-4):
        self.X, self.y, self.ls = X, y, ls
        K = self.k(X, X) + noise * torch.eye(len(X), dtype=X.dtype)
        self.L = torch.linalg.cholesky(K)
        self.alpha = torch.cholesky_solve(y[:, None], self.L)

    def k(self, a, b):
        return torch.exp(-0.5 * torch.cdist(a, b).pow(2) / self.ls ** 2)

    def posterior(self, x):
        ks = self.k(x, self.X)
        mean = (ks @ self.alpha).squeeze(-1)
        v = torch.cholesky_solve(ks.T, self.L)
        var = (1.0 - (ks * v.T).sum(-1)).clamp_min(1e-9)
        return mean, var.sqrt()


def expected_improvement(gp, x, best):
    mu, sigma = gp.posterior(x)
    z = (mu - best) / sigma
    normal = torch.distributions.Normal(torch.zeros_like(z), torch.ones_like(z))
    return (mu - best) * normal.cdf(z) + sigma * normal.log_prob(z).exp()


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    X = torch.from_numpy(rng.uniform(0, 1, size=(6, 2)))
    y = torch.sin(3 * X[:, 0]) * torch.cos(2 * X[:, 1])
    gp = FittedGP(X, y)
    x_cand = torch.rand(1, 2, requires_grad=True)
    opt = torch.optim.Adam([x_cand], lr=0.05)
    x_cand = x_cand.double()  # <-- CUT
    ei = expected_improvement(gp, x_cand, y.max())
    opt.zero_grad()
    (-ei.sum()).backward()
    opt.step()
    return {"x_cand": x_cand, "opt": opt, "ei": ei}
