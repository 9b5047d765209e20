"""Contrastive loss with a hand-written InfoNCE: the positive logit is removed from the
denominator with `sim_exp.scatter_(1, pos, 0.0)` on the output of `exp()`, which
autograd saved for exp's backward, so backward() raises a version-counter error.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "proj.weight"
EXPECT = "backward_error"


def info_nce(z1, z2, tau=0.2):
    sim_exp = torch.exp(z1 @ z2.t() / tau)
    pos = torch.arange(z1.shape[0]).unsqueeze(1)
    numer = sim_exp.gather(1, pos).squeeze(1)
    sim_exp.scatter_(1, pos, 0.0)  # <-- CUT
    return -(numer / (numer + sim_exp.sum(1))).log().mean()


def run():
    torch.manual_seed(0)
    proj = nn.Linear(16, 8)
    opt = torch.optim.SGD(proj.parameters(), lr=0.1)
    x = torch.randn(6, 16)
    z1 = F.normalize(proj(x + 0.1 * torch.randn_like(x)), dim=1)
    z2 = F.normalize(proj(x + 0.1 * torch.randn_like(x)), dim=1)
    loss = info_nce(z1, z2)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"proj": proj, "opt": opt, "loss": loss}
