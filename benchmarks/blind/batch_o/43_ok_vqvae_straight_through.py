"""Control: VQ-VAE with the straight-through estimator written correctly,
z_e + (z_q - z_e).detach(), and commitment weight 0. The argmin and the
detaches look like cuts, but the encoder gets its gradient through the STE.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[0].weight"
EXPECT = "grad_ok"


class VQ(nn.Module):
    def __init__(self, k=16, d=4, beta=0.0):
        super().__init__()
        self.codebook = nn.Embedding(k, d)
        self.beta = beta

    def forward(self, z_e):
        idx = torch.cdist(z_e, self.codebook.weight).argmin(1)
        z_q = self.codebook(idx)
        loss = F.mse_loss(z_q, z_e.detach()) + self.beta * F.mse_loss(z_e, z_q.detach())
        return z_e + (z_q - z_e).detach(), loss, idx


class VQVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 4))
        self.vq = VQ()
        self.decoder = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 12))

    def forward(self, x):
        z, vq_loss, idx = self.vq(self.encoder(x))
        return self.decoder(z), vq_loss, idx


def run():
    torch.manual_seed(0)
    model = VQVAE()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    x = torch.randn(32, 12)
    recon, vq_loss, idx = model(x)
    loss = F.mse_loss(recon, x) + vq_loss  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    usage = torch.bincount(idx, minlength=16).float().div(len(idx)).numpy()
    return {"model": model, "loss": loss, "usage": usage}
