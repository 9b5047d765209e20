"""Gaussian mixture fitted by gradient descent: the user computes the negative
log-likelihood with a numpy logsumexp helper ("more stable") and wraps the number back as
a tensor with requires_grad=True so backward runs. The means and log-variances get no grad.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import numpy as np
import torch

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "gmm.means"
EXPECT = "grad_none"


def np_logsumexp(a, axis):
    m = a.max(axis=axis, keepdims=True)
    return (m + np.log(np.exp(a - m).sum(axis=axis, keepdims=True))).squeeze(axis)


class TorchGMM(torch.nn.Module):
    def __init__(self, k=3, d=2):
        super().__init__()
        self.means = torch.nn.Parameter(torch.randn(k, d))
        self.log_var = torch.nn.Parameter(torch.zeros(k, d))
        self.logits = torch.nn.Parameter(torch.zeros(k))

    def component_log_prob(self, x):
        var = self.log_var.exp()
        diff = x[:, None, :] - self.means[None]
        return -0.5 * ((diff ** 2) / var + self.log_var + np.log(2 * np.pi)).sum(-1)

    def nll(self, x):
        lp = self.component_log_prob(x) + torch.log_softmax(self.logits, 0)
        lp_np = lp.detach().cpu().numpy()  # <-- CUT
        ll = np_logsumexp(lp_np, axis=1).mean()
        return torch.tensor(-ll, dtype=torch.float32, requires_grad=True)


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    data = np.concatenate([rng.normal(m, 0.3, size=(40, 2)) for m in (-2.0, 0.0, 2.0)])
    x = torch.from_numpy(data).float()
    gmm = TorchGMM()
    opt = torch.optim.Adam(gmm.parameters(), lr=5e-2)
    loss = gmm.nll(x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"gmm": gmm, "opt": opt, "loss": loss, "x": x}
