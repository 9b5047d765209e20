"""Latent-space attribution for a trained VAE: the user encodes a batch, backpropagates a
decoder-output statistic and reads z.grad to see which latent dimensions matter. z comes out
of reparameterize() as mu + eps * std, a non-leaf without retain_grad(), so vae_out["z"].grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "vae_out['z']"
EXPECT = "grad_none"


class ConvVAE(nn.Module):
    def __init__(self, z_dim=6):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 8, 3, 2, 1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 8 * 8, 2 * z_dim))
        self.dec = nn.Sequential(nn.Linear(z_dim, 8 * 8 * 8), nn.ReLU(), nn.Unflatten(1, (8, 8, 8)),
                                 nn.ConvTranspose2d(8, 1, 4, 2, 1), nn.Sigmoid())

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        return mu + torch.randn_like(std) * std  # <-- CUT

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, -1)
        z = self.reparameterize(mu, logvar)
        return {"recon": self.dec(z), "mu": mu, "logvar": logvar, "z": z}


def train_step(vae, opt, x):
    out = vae(x)
    rec = F.binary_cross_entropy(out["recon"], x, reduction="sum") / x.size(0)
    kl = -0.5 * (1 + out["logvar"] - out["mu"].pow(2) - out["logvar"].exp()).sum() / x.size(0)
    opt.zero_grad()
    (rec + kl).backward()
    opt.step()


def latent_sensitivity(vae, x):
    out = vae(x)
    out["recon"][:, :, 4:12, 4:12].mean().backward()
    return out


def run():
    torch.manual_seed(0)
    vae = ConvVAE()
    opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
    x = torch.rand(8, 1, 16, 16)
    train_step(vae, opt, x)
    vae_out = latent_sensitivity(vae, x[:2])
    return {"vae": vae, "vae_out": vae_out}
