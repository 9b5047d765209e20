"""DDPM-style training with a learnable noise schedule (VDM-like gamma endpoints).
alpha_bar is computed from the schedule, then turned into a Python float with
`.item()` for `math.sqrt`, so the schedule parameters never learn.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "sched.gamma_max"
EXPECT = "grad_none"


class LearnedSchedule(nn.Module):
    def __init__(self):
        super().__init__()
        self.gamma_min = nn.Parameter(torch.tensor(-6.0))
        self.gamma_max = nn.Parameter(torch.tensor(6.0))

    def forward(self, t):
        gamma = self.gamma_min + (self.gamma_max - self.gamma_min) * t
        return torch.sigmoid(-gamma)


def run():
    torch.manual_seed(0)
    denoiser = nn.Sequential(nn.Linear(9, 32), nn.SiLU(), nn.Linear(32, 8))
    sched = LearnedSchedule()
    opt = torch.optim.Adam(list(denoiser.parameters()) + list(sched.parameters()), lr=1e-4)
    x0 = torch.randn(16, 8)
    t = 0.37
    a_bar = sched(torch.tensor(t)).item()  # <-- CUT
    noise = torch.randn_like(x0)
    x_t = math.sqrt(a_bar) * x0 + math.sqrt(1 - a_bar) * noise
    inp = torch.cat([x_t, torch.full((16, 1), t)], 1)
    loss = F.mse_loss(denoiser(inp), noise)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"denoiser": denoiser, "sched": sched, "loss": loss}
