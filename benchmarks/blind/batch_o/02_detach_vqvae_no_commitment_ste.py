"""VQ-VAE where the straight-through line was parenthesised wrongly:
(z_e + (z_q - z_e)).detach(). With the commitment weight set to 0 in the config
the only path to the encoder was the STE, so encoder grads are None while the
decoder and codebook train.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[0].weight"
EXPECT = "grad_none"

CONFIG = {"codebook_size": 16, "dim": 4, "commitment_beta": 0.0}


class VectorQuantizer(nn.Module):
    def __init__(self, k, d, beta):
        super().__init__()
        self.codebook = nn.Embedding(k, d)
        self.codebook.weight.data.uniform_(-1.0 / k, 1.0 / k)
        self.beta = beta

    def forward(self, z_e):
        d = (z_e.pow(2).sum(1, keepdim=True) - 2 * z_e @ self.codebook.weight.t()
             + self.codebook.weight.pow(2).sum(1))
        idx = d.argmin(1)
        z_q = self.codebook(idx)
        vq_loss = F.mse_loss(z_q, z_e.detach())
        if self.beta > 0:
            vq_loss = vq_loss + self.beta * F.mse_loss(z_e, z_q.detach())
        z_st = (z_e + (z_q - z_e)).detach()  # <-- CUT
        return z_st, vq_loss, idx


class VQVAE(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, cfg["dim"]))
        self.vq = VectorQuantizer(cfg["codebook_size"], cfg["dim"], cfg["commitment_beta"])
        self.decoder = nn.Sequential(nn.Linear(cfg["dim"], 16), nn.ReLU(), nn.Linear(16, 12))

    def forward(self, x):
        z_q, vq_loss, idx = self.vq(self.encoder(x))
        return self.decoder(z_q), vq_loss


def run():
    torch.manual_seed(0)
    model = VQVAE(CONFIG)
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    x = torch.randn(32, 12)
    recon, vq_loss = model(x)
    loss = F.mse_loss(recon, x) + vq_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
