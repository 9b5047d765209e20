"""VAE with a custom ELBO (analytic KL plus a free-bits floor). To log the
gradient norm of the ELBO, the trainer calls `torch.autograd.grad(loss,
params)` instead of `loss.backward()`, then `opt.step()`. autograd.grad returns
the gradients but never fills `.grad`, so the encoder's .grad stays None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "vae.enc[0].weight"
EXPECT = "grad_none"


class VAE(nn.Module):
    def __init__(self, d=12, z=3):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, 16), nn.Tanh(), nn.Linear(16, 2 * z))
        self.dec = nn.Sequential(nn.Linear(z, 16), nn.Tanh(), nn.Linear(16, d))

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, -1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar


def elbo_loss(x, recon, mu, logvar, free_bits=0.1):
    rec = F.mse_loss(recon, x, reduction="none").sum(-1).mean()
    kl = 0.5 * (mu ** 2 + logvar.exp() - 1 - logvar).mean(0)
    return rec + torch.clamp(kl, min=free_bits).sum()


class Trainer:
    def __init__(self):
        self.vae = VAE()
        self.opt = torch.optim.Adam(self.vae.parameters(), lr=1e-3)
        self.log = []

    def step(self, x):
        recon, mu, logvar = self.vae(x)
        loss = elbo_loss(x, recon, mu, logvar)
        self.opt.zero_grad()
        grads = torch.autograd.grad(loss, list(self.vae.parameters()))  # <-- CUT
        self.log.append(float(torch.sqrt(sum((g ** 2).sum() for g in grads))))
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    tr = Trainer()
    loss = tr.step(torch.randn(8, 12))
    return {"vae": tr.vae, "loss": loss}
