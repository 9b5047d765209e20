"""MAML inner loop written with torch.autograd.grad (create_graph=False) and
fast weights p - lr * g. To "save memory" the fast weights are detached and
re-marked as leaves, so the outer query loss backpropagates only into the fast
weights and the meta-parameters' .grad stays None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net[0].weight"
EXPECT = "grad_none"


def functional_forward(x, params):
    h = F.relu(F.linear(x, params[0], params[1]))
    return F.linear(h, params[2], params[3])


def adapt(net, xs, ys, inner_lr=0.1):
    params = list(net.parameters())
    inner = F.mse_loss(functional_forward(xs, params), ys)
    grads = torch.autograd.grad(inner, params, create_graph=False)
    fast = [(p - inner_lr * g).detach().requires_grad_() for p, g in zip(params, grads)]  # <-- CUT
    return fast


def run():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 1))
    meta_opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    meta_opt.zero_grad()
    total = 0.0
    for task in range(2):
        amp, phase = 1.0 + task, 0.5 * task
        xs, xq = torch.rand(5, 1) * 10 - 5, torch.rand(5, 1) * 10 - 5
        ys, yq = amp * torch.sin(xs + phase), amp * torch.sin(xq + phase)
        fast = adapt(net, xs, ys)
        outer = F.mse_loss(functional_forward(xq, fast), yq)
        outer.backward()
        total += outer.item()
    meta_opt.step()
    return {"net": net, "total": total}
