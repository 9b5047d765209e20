"""VAE whose encoder output is sliced into mu and logvar (the user had switched
from .chunk(2), whose views refuse in-place edits). The KL term uses mu.pow(2),
which saves mu, and afterwards decode() clamps mu in place "to keep the latent
bounded". mu is a view of the encoder output: backward raises the in-place error.
Thread: SO, VAE "modified by an inplace operation" (recalled family of questions).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class VAE(nn.Module):
    def __init__(self, d_x=16, d_z=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d_x, 32), nn.ReLU(), nn.Linear(32, 2 * d_z))
        self.dec = nn.Sequential(nn.Linear(d_z, 32), nn.ReLU(), nn.Linear(32, d_x))

    def encode(self, x):
        h = self.enc(x)
        d_z = h.size(1) // 2
        return h[:, :d_z], h[:, d_z:]

    def decode(self, mu, logvar):
        mu.clamp_(-3.0, 3.0)  # <-- CUT
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.dec(z)


def vae_loss(model, x, beta=1.0):
    mu, logvar = model.encode(x)
    kl = -0.5 * torch.mean(torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1))
    recon = F.mse_loss(model.decode(mu, logvar), x)
    return recon + beta * kl


def run():
    torch.manual_seed(0)
    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(8, 16)
    loss = vae_loss(model, x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
