"""Training step ported to torch.func: the gradient is computed with
`torch.func.grad(compute_loss)(params, x, y)` over a dict of the model's
parameters, then opt.step() is called as before. torch.func.grad returns the
gradients and never writes p.grad, so every .grad is None and Adam skips them.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    params = dict(model.named_parameters())

    def compute_loss(p, x, y):
        return F.cross_entropy(functional_call(model, p, (x,)), y)

    x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
    opt.zero_grad()
    grads = grad(compute_loss)(params, x, y)  # <-- CUT
    gnorm = torch.sqrt(sum(g.pow(2).sum() for g in grads.values()))
    opt.step()
    return {"model": model, "opt": opt, "grads": grads, "gnorm": gnorm}
