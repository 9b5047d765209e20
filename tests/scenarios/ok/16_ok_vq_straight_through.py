"""Control: VQ-VAE step with the textbook straight-through estimator
`z_q = z_e + (z_q - z_e).detach()`, argmin code lookup, codebook loss on
`z_e.detach()` and commitment loss on `z_q.detach()`. Every detach here is
intended; the encoder gets its gradient through the straight-through path.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[0].weight"
EXPECT = "grad_ok"


class VQVAE(nn.Module):
    def __init__(self, d=8, k=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, d))
        self.codebook = nn.Embedding(k, d)
        self.decoder = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, 20))

    def forward(self, x):
        z_e = self.encoder(x)
        codes = torch.cdist(z_e, self.codebook.weight).argmin(dim=1)
        z_q = self.codebook(codes)
        vq_loss = F.mse_loss(z_q, z_e.detach()) + 0.25 * F.mse_loss(z_e, z_q.detach())
        z_st = z_e + (z_q - z_e).detach()
        return self.decoder(z_st), vq_loss, codes


def run():
    torch.manual_seed(0)
    model = VQVAE()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    x = torch.randn(16, 20)
    recon, vq_loss, codes = model(x)
    loss = F.mse_loss(recon, x) + vq_loss  # <-- CUT
    usage = codes.unique().numel()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss, "usage": usage}
