"""sigma-VAE with a learned decoder scale log_sigma. The trainer sums a list
of loss-term callbacks; the Gaussian NLL term takes
`sigma = model.log_sigma.exp().item()` so it can also be logged, which turns
it into a Python float. Encoder and decoder train; log_sigma.grad is None.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.log_sigma"
EXPECT = "grad_none"


class VAE(nn.Module):
    def __init__(self, d=16, z=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, 2 * z))
        self.dec = nn.Sequential(nn.Linear(z, 32), nn.ReLU(), nn.Linear(32, d))
        self.log_sigma = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar


def gaussian_nll(model, x, out, log):
    recon = out[0]
    sigma = model.log_sigma.exp().item()  # <-- CUT
    log["sigma"] = sigma
    return ((x - recon) ** 2).sum(-1).mean() / (2 * sigma ** 2) + x.shape[1] * float(np.log(sigma))


def kl_term(model, x, out, log):
    _, mu, logvar = out
    return -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(-1).mean()


LOSS_TERMS = [gaussian_nll, kl_term]


def run():
    torch.manual_seed(0)
    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(16, 16)
    log = {}
    out = model(x)
    loss = sum(term(model, x, out, log) for term in LOSS_TERMS)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss, "log": log}
