"""Control: DP-SGD-style per-sample gradient clipping with torch.func: the
per-example gradients come from vmap(grad(loss_fn)) over functional_call with
detached parameter copies, are clipped per sample, averaged and written into
p.grad by hand before optimizer.step(). The first layer's .grad is set and non-zero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = torch.randn(10, 8)
    y = torch.randint(0, 3, (10,))

    def loss_fn(p, xi, yi):
        out = functional_call(model, p, (xi.unsqueeze(0),))
        return F.cross_entropy(out, yi.unsqueeze(0))

    per_sample = vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, x, y)  # <-- CUT
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in per_sample.values()]).norm(dim=0)
    factor = (1.0 / (norms + 1e-6)).clamp(max=1.0)
    for name, p in model.named_parameters():
        g = per_sample[name]
        p.grad = (g * factor.view(-1, *([1] * (g.dim() - 1)))).mean(dim=0)
    opt.step()
    return {"model": model, "opt": opt, "per_sample": per_sample}
