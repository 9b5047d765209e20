"""Discrete-latent autoencoder with a learnable Gumbel-softmax temperature:
tau is passed to F.gumbel_softmax as tau=self.log_tau.exp().item() because the
functional API documents tau as a float. The encoder trains, log_tau does not.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.log_tau"
EXPECT = "grad_none"


class GumbelAE(nn.Module):
    def __init__(self, d=8, k=6):
        super().__init__()
        self.enc = nn.Linear(d, k)
        self.dec = nn.Linear(k, d)
        self.log_tau = nn.Parameter(torch.tensor(0.0))

    def forward(self, x):
        logits = self.enc(x)
        tau = self.log_tau.exp().item()  # <-- CUT
        g = -torch.log(-torch.log(torch.rand_like(logits).clamp_min(1e-9)))
        y = F.softmax((logits + g) / tau, dim=-1)
        return self.dec(y), logits


def run():
    torch.manual_seed(0)
    model = GumbelAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(16, 8)
    recon, logits = model(x)
    q = F.softmax(logits, -1)
    kl = (q * (q.clamp_min(1e-9).log() + torch.log(torch.tensor(6.0)))).sum(-1).mean()
    loss = F.mse_loss(recon, x) + 0.1 * kl
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
