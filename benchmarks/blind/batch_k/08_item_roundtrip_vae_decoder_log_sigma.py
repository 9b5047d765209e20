"""Gaussian-decoder VAE with a learnable global decoder log-sigma (sigma-VAE). The
reconstruction NLL helper reads the scale as a Python float for "numerical safety" with
max(self.log_sigma.item(), -6), so encoder and decoder train but vae.log_sigma.grad is None.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "vae.log_sigma"
EXPECT = "grad_none"


class SigmaVAE(nn.Module):
    def __init__(self, x_dim=20, z_dim=4, h=32):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(x_dim, h), nn.ReLU(), nn.Linear(h, 2 * z_dim))
        self.dec = nn.Sequential(nn.Linear(z_dim, h), nn.ReLU(), nn.Linear(h, x_dim))
        self.log_sigma = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar

    def gaussian_nll(self, x_hat, x):
        ls = max(self.log_sigma.item(), -6.0)  # <-- CUT
        return (0.5 * ((x - x_hat) / float(np.exp(ls))).pow(2) + ls + 0.5 * float(np.log(2 * np.pi))).sum(-1)


def elbo_loss(vae, x, beta=1.0):
    x_hat, mu, logvar = vae(x)
    rec = vae.gaussian_nll(x_hat, x)
    kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(-1)
    return (rec + beta * kl).mean()


def run():
    torch.manual_seed(0)
    vae = SigmaVAE()
    opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
    x = torch.randn(16, 20)
    loss = elbo_loss(vae, x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"vae": vae, "loss": loss}
