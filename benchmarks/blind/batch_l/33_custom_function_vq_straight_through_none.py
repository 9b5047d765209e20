"""VQ-VAE with a hand-written straight-through quantiser (autograd.Function). Its
backward returns None for the encoder output instead of passing grad_output through.
The codebook loss trains the codebook and the decoder trains, but with the commitment
weight set to 0 in the config the encoder gets no gradient at all.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[0].weight"
EXPECT = "grad_none"


class VectorQuantizeST(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z_e, codebook):
        idx = torch.cdist(z_e, codebook).argmin(dim=1)
        ctx.save_for_backward(idx)
        return codebook[idx]

    @staticmethod
    def backward(ctx, grad_output):
        return None, None  # <-- CUT


class VQVAE(nn.Module):
    def __init__(self, d_in=16, d_lat=4, n_codes=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU(), nn.Linear(32, d_lat))
        self.codebook = nn.Parameter(torch.randn(n_codes, d_lat))
        self.decoder = nn.Sequential(nn.Linear(d_lat, 32), nn.ReLU(), nn.Linear(32, d_in))

    def forward(self, x):
        z_e = self.encoder(x)
        z_q_st = VectorQuantizeST.apply(z_e, self.codebook)
        idx = torch.cdist(z_e.detach(), self.codebook.detach()).argmin(dim=1)
        codebook_loss = F.mse_loss(self.codebook[idx], z_e.detach())
        return self.decoder(z_q_st), z_e, self.codebook[idx], codebook_loss


def run():
    torch.manual_seed(0)
    cfg = {"beta": 0.0, "lr": 2e-4}
    model = VQVAE()
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    x = torch.randn(32, 16)
    recon, z_e, z_q, cb_loss = model(x)
    loss = F.mse_loss(recon, x) + cb_loss
    if cfg["beta"] > 0:
        loss = loss + cfg["beta"] * F.mse_loss(z_e, z_q.detach())
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
