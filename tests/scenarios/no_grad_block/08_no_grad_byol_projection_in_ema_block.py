"""BYOL step: the EMA update of the target network runs in a `torch.no_grad()`
block, and the online projection of view 1 was moved into that same block while
refactoring. The predictor still trains, but the online projector gets no gradient.
"""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "online_proj[0].weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    online_proj = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
    predictor = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
    target_proj = copy.deepcopy(online_proj).requires_grad_(False)
    opt = torch.optim.SGD(list(online_proj.parameters()) + list(predictor.parameters()), lr=0.05)
    x = torch.randn(8, 8)
    v1, v2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
    with torch.no_grad():
        for pt, po in zip(target_proj.parameters(), online_proj.parameters()):
            pt.mul_(0.99).add_(0.01 * po)
        z2 = target_proj(v2)
        z1 = online_proj(v1)  # <-- CUT
    p1 = predictor(z1)
    loss = 2 - 2 * F.cosine_similarity(p1, F.normalize(z2, dim=-1), dim=-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"online_proj": online_proj, "predictor": predictor, "loss": loss}
