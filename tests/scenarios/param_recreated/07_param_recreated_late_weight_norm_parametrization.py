"""The discriminator gets weight normalization added by a `stabilize()` helper that is
called after the optimizer was created. The parametrization moves `weight` to
`parametrizations.weight.original0/1`; the optimizer's old weight is never used.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import weight_norm

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt_d.param_groups[0]['params'][0]"
EXPECT = "grad_none"


def stabilize(disc):
    for i, m in enumerate(disc):
        if isinstance(m, nn.Linear):
            disc[i] = weight_norm(m)  # <-- CUT
    return disc


def run():
    torch.manual_seed(0)
    D = nn.Sequential(nn.Linear(4, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    D = stabilize(D)
    real, fake = torch.randn(16, 4) + 1.0, torch.randn(16, 4)
    d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake)).mean()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    return {"D": D, "opt_d": opt_d, "d_loss": d_loss}
