"""VQ-VAE/latent-diffusion-style quantizer rewritten by hand: the code index comes
from argmin over distances and quantize = embed[ind] is fed to the decoder without the
straight-through trick (x + (q - x).detach()). The index path is not differentiable,
so the encoder gets no grad from the reconstruction loss.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "vqvae.encoder[0].weight"
EXPECT = "grad_none"


class VectorQuantize(nn.Module):
    def __init__(self, dim=4, codebook_size=16, commitment_weight=0.0):
        super().__init__()
        self.embed = nn.Parameter(torch.randn(codebook_size, dim))
        self.commitment_weight = commitment_weight

    def forward(self, x):
        dist = torch.cdist(x, self.embed)
        embed_ind = dist.argmin(dim=-1)  # <-- CUT
        quantize = self.embed[embed_ind]
        loss = F.mse_loss(quantize, x.detach())
        if self.commitment_weight > 0:
            loss = loss + self.commitment_weight * F.mse_loss(quantize.detach(), x)
        return quantize, embed_ind, loss


class VQVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
        self.vq = VectorQuantize()
        self.decoder = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 10))

    def forward(self, x):
        q, ind, vq_loss = self.vq(self.encoder(x))
        return self.decoder(q), vq_loss


def run():
    torch.manual_seed(0)
    vqvae = VQVAE()
    opt = torch.optim.Adam(vqvae.parameters(), lr=3e-4)
    x = torch.randn(8, 10)
    recon, vq_loss = vqvae(x)
    loss = F.mse_loss(recon, x) + vq_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"vqvae": vqvae, "loss": loss}
