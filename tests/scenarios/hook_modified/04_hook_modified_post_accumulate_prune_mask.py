"""Gradient masking for pruning done with register_post_accumulate_grad_hook:
the hook multiplies p.grad in place by a mask built from `p.abs() > thresh`,
but the threshold is in the wrong units, so the mask is all zeros and the
pruned layer's .grad ends all zeros.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_zero"


def attach_mask(p, thresh):
    mask = (p.detach().abs() > thresh).float()

    def hook(param):
        param.grad.mul_(mask)  # <-- CUT

    return p.register_post_accumulate_grad_hook(hook)


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    h = attach_mask(model[0].weight, thresh=5.0)
    x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss, "h": h}
