"""DDPM trainer: the timestep embedding MLP runs under torch.no_grad() because
"timesteps are integers, there is nothing to differentiate". The noise
predictor trains, but the time-embedding MLP never gets a gradient.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.time_mlp[0].weight"
EXPECT = "grad_none"


def sinusoidal(t, dim):
    half = dim // 2
    freqs = torch.exp(-np.log(10000.0) * torch.arange(half) / half)
    a = t.float()[:, None] * freqs[None]
    return torch.cat([a.sin(), a.cos()], 1)


class EpsModel(nn.Module):
    def __init__(self, d=8, tdim=16):
        super().__init__()
        self.tdim = tdim
        self.time_mlp = nn.Sequential(nn.Linear(tdim, 32), nn.SiLU(), nn.Linear(32, 32))
        self.inp = nn.Linear(d, 32)
        self.out = nn.Sequential(nn.SiLU(), nn.Linear(32, d))

    def forward(self, x, t):
        with torch.no_grad():
            temb = self.time_mlp(sinusoidal(t, self.tdim))  # <-- CUT
        return self.out(self.inp(x) + temb)


def run():
    torch.manual_seed(0)
    T = 100
    betas = torch.linspace(1e-4, 0.02, T)
    alpha_bar = torch.cumprod(1 - betas, 0)
    model = EpsModel()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    x0 = torch.randn(16, 8)
    t = torch.randint(0, T, (16,))
    eps = torch.randn_like(x0)
    ab = alpha_bar[t][:, None]
    x_t = ab.sqrt() * x0 + (1 - ab).sqrt() * eps
    loss = F.mse_loss(model(x_t, t), eps)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
