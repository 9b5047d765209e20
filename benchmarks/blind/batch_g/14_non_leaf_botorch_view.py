"""Acquisition-function optimisation (BoTorch style): the candidate batch is built
as `torch.tensor(raw, requires_grad=True).view(q, 1, d)` so it has the t-batch
shape the acquisition function expects. The view is a non-leaf, so after
`(-acq).sum().backward()` X.grad is None and the gradient step cannot run.
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "X"
EXPECT = "grad_none"


class SimpleGP(nn.Module):
    def __init__(self, train_X, train_Y, lengthscale=0.3, noise=1e-3):
        super().__init__()
        self.train_X, self.train_Y = train_X, train_Y
        self.lengthscale, self.noise = lengthscale, noise
        K = self.kernel(train_X, train_X) + noise * torch.eye(len(train_X))
        self.L = torch.linalg.cholesky(K)
        self.alpha = torch.cholesky_solve(train_Y, self.L)

    def kernel(self, a, b):
        return torch.exp(-torch.cdist(a, b) ** 2 / (2 * self.lengthscale ** 2))

    def posterior(self, X):
        k = self.kernel(X, self.train_X)
        mean = k @ self.alpha
        v = torch.cholesky_solve(k.transpose(-1, -2), self.L)
        var = (1 - (k * v.transpose(-1, -2)).sum(-1, keepdim=True)).clamp_min(1e-9)
        return mean, var


class ExpectedImprovement:
    def __init__(self, model, best_f):
        self.model, self.best_f = model, best_f

    def __call__(self, X):                         # X: b x q x d
        mean, var = self.model.posterior(X)
        sigma = var.sqrt()
        u = (mean - self.best_f) / sigma
        normal = torch.distributions.Normal(0.0, 1.0)
        ei = sigma * (u * normal.cdf(u) + normal.log_prob(u).exp())
        return ei.squeeze(-1).squeeze(-1)


def run():
    torch.manual_seed(0)
    train_X = torch.rand(8, 2)
    train_Y = torch.sin(6 * train_X).sum(-1, keepdim=True)
    gp = SimpleGP(train_X, train_Y)
    acqf = ExpectedImprovement(gp, best_f=train_Y.max())

    raw = [[0.25, 0.75], [0.6, 0.1], [0.9, 0.4]]
    X = torch.tensor(raw, requires_grad=True).view(3, 1, 2)  # <-- CUT
    loss = -acqf(X).sum()
    loss.backward()
    step = None if X.grad is None else 0.1 * X.grad
    return {"X": X, "acqf": acqf, "loss": loss, "step": step}
