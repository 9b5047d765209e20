"""Diffusion model with a learned noise schedule (VDM-style gamma network):
the signal/noise scales are computed from gamma(t) in numpy "for numerical
stability" and wrapped back with torch.from_numpy. The denoiser trains, but
the schedule network never receives a gradient.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "diffusion.schedule.net[0].weight"
EXPECT = "grad_none"


class LearnedSchedule(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, 16), nn.Softplus(), nn.Linear(16, 1))

    def forward(self, t):
        return -5.0 + 10.0 * torch.sigmoid(self.net(t[:, None]))


class Denoiser(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d + 1, 32), nn.SiLU(), nn.Linear(32, d))

    def forward(self, x, t):
        return self.net(torch.cat([x, t[:, None]], 1))


class Diffusion(nn.Module):
    def __init__(self):
        super().__init__()
        self.schedule = LearnedSchedule()
        self.denoiser = Denoiser()

    def scales(self, t):
        g = self.schedule(t).squeeze(1).detach().numpy().astype(np.float64)  # <-- CUT
        alpha = np.sqrt(1.0 / (1.0 + np.exp(g)))
        sigma = np.sqrt(1.0 / (1.0 + np.exp(-g)))
        return torch.from_numpy(alpha).float(), torch.from_numpy(sigma).float()

    def loss(self, x0):
        t = torch.rand(x0.shape[0])
        eps = torch.randn_like(x0)
        alpha, sigma = self.scales(t)
        x_t = alpha[:, None] * x0 + sigma[:, None] * eps
        return F.mse_loss(self.denoiser(x_t, t), eps)


def run():
    torch.manual_seed(0)
    diffusion = Diffusion()
    opt = torch.optim.Adam(diffusion.parameters(), lr=1e-3)
    x0 = torch.randn(32, 6)
    loss = diffusion.loss(x0)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"diffusion": diffusion, "loss": loss}
