"""Exact GP regression with learnable log-lengthscale and log-noise. The RBF
kernel matrix is built inside `torch.no_grad()` ("it's just the Gram matrix")
before the Cholesky of the marginal likelihood, so the noise learns but the
lengthscale never gets a gradient.
"""
import torch

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "log_ls"
EXPECT = "grad_none"


def rbf(a, b, ls):
    d2 = (a[:, None, :] - b[None, :, :]).pow(2).sum(-1)
    return torch.exp(-0.5 * d2 / ls ** 2)


def run():
    torch.manual_seed(0)
    X = torch.linspace(0, 1, 20).unsqueeze(1)
    y = torch.sin(6 * X).squeeze(1) + 0.1 * torch.randn(20)
    log_ls = torch.zeros((), requires_grad=True)
    log_noise = torch.tensor(-2.0, requires_grad=True)
    opt = torch.optim.Adam([log_ls, log_noise], lr=0.05)
    opt.zero_grad()
    with torch.no_grad():
        K = rbf(X, X, log_ls.exp())  # <-- CUT
    Ky = K + (log_noise.exp() + 1e-4) * torch.eye(20)
    L = torch.linalg.cholesky(Ky)
    alpha = torch.cholesky_solve(y.unsqueeze(1), L)
    nll = 0.5 * (y.unsqueeze(1) * alpha).sum() + L.diagonal().log().sum() + 18.3788
    nll.backward()
    opt.step()
    return {"log_ls": log_ls, "log_noise": log_noise, "nll": nll}
