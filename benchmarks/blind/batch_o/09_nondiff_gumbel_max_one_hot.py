"""Categorical VAE that samples its latent with the Gumbel-max trick
(one_hot(argmax(logits + g))) instead of gumbel_softmax. The decoder trains,
but with the KL weight at 0 during warm-up the only path to the encoder was
the sample, so the encoder's grads are None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "vae.encoder[0].weight"
EXPECT = "grad_none"

CFG = {"n_cat": 8, "kl_weight_warmup": 0.0}


class CategoricalVAE(nn.Module):
    def __init__(self, d=12, k=8):
        super().__init__()
        self.k = k
        self.encoder = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, k))
        self.decoder = nn.Sequential(nn.Linear(k, 32), nn.ReLU(), nn.Linear(32, d))

    def sample(self, logits):
        u = torch.rand_like(logits).clamp(1e-9, 1 - 1e-9)
        g = -torch.log(-torch.log(u))
        return F.one_hot(torch.argmax(logits + g, dim=-1), self.k).float()  # <-- CUT

    def forward(self, x):
        logits = self.encoder(x)
        z = self.sample(logits)
        return self.decoder(z), logits


def run():
    torch.manual_seed(0)
    vae = CategoricalVAE(k=CFG["n_cat"])
    opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
    x = torch.randn(16, 12)
    recon, logits = vae(x)
    loss = F.mse_loss(recon, x)
    if CFG["kl_weight_warmup"] > 0:
        q = F.softmax(logits, -1)
        loss = loss + CFG["kl_weight_warmup"] * (q * q.clamp_min(1e-9).log()).sum(-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"vae": vae, "loss": loss}
