"""Differentiable EM for a Gaussian mixture in torch: the E-step responsibilities come from
softmax, then are renormalised in place (`resp /= resp.sum(...)`) "for numerical safety".
That modifies softmax's saved output, so backward raises an in-place modification error.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import numpy as np
import torch

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class DiffEMGMM(torch.nn.Module):
    def __init__(self, k=2, d=2):
        super().__init__()
        self.mu = torch.nn.Parameter(torch.randn(k, d))
        self.log_sigma = torch.nn.Parameter(torch.zeros(k))

    def log_gauss(self, x):
        d = x.shape[1]
        sq = ((x[:, None] - self.mu[None]) ** 2).sum(-1)
        var = torch.exp(2 * self.log_sigma)
        return -0.5 * sq / var - d * self.log_sigma - 0.5 * d * float(np.log(2 * np.pi))

    def e_step(self, x):
        resp = torch.softmax(self.log_gauss(x), dim=1)
        resp /= resp.sum(1, keepdim=True)  # <-- CUT
        return resp

    def m_step_means(self, x, resp):
        nk = resp.sum(0) + 1e-8
        return (resp.T @ x) / nk[:, None]


def run():
    torch.manual_seed(0)
    x = torch.cat([torch.randn(20, 2) - 2, torch.randn(20, 2) + 2])
    gmm = DiffEMGMM()
    resp = gmm.e_step(x)
    new_mu = gmm.m_step_means(x, resp)
    loss = ((new_mu - gmm.mu) ** 2).sum() - (resp * gmm.log_gauss(x)).sum(1).mean()
    loss.backward()
    return {"gmm": gmm, "loss": loss}
