"""Denoising autoencoder with a LayerNorm on the bottleneck code. The encode() method calls
self.code_norm(z) but never assigns the result (a leftover of refactoring z = ... chains), so the
encoder and decoder train and ae.code_norm.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "ae.code_norm.weight"
EXPECT = "grad_none"


class DenoisingAE(nn.Module):
    def __init__(self, d=64, code=12, noise=0.2):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, 48), nn.GELU(), nn.Linear(48, code))
        self.code_norm = nn.LayerNorm(code)
        self.dec = nn.Sequential(nn.Linear(code, 48), nn.GELU(), nn.Linear(48, d))
        self.noise = noise

    def encode(self, x):
        z = self.enc(x)
        self.code_norm(z)  # <-- CUT
        return z

    def forward(self, x):
        x_noisy = x + self.noise * torch.randn_like(x) if self.training else x
        return self.dec(self.encode(x_noisy))


def run():
    torch.manual_seed(0)
    ae = DenoisingAE()
    opt = torch.optim.AdamW(ae.parameters(), lr=1e-3)
    x = torch.randn(32, 64)
    loss = F.mse_loss(ae(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"ae": ae, "loss": loss}
