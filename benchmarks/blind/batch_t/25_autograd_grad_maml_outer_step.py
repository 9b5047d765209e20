"""MAML: the meta-gradient is taken with torch.autograd.grad(...) (like the inner loop, where it is
correct) and then meta_opt.step() is called; .grad of the model is never filled.
Thread: MAML meta-parameters do not change (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "autograd_grad_not_backward"
QUERY = 'model[0].weight'
EXPECT = "grad_none"

def fwd(x, ps):
    return F.linear(torch.relu(F.linear(x, ps[0], ps[1])), ps[2], ps[3])

def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
    meta_opt = torch.optim.Adam(model.parameters(), 1e-3)
    ps = list(model.parameters())
    meta_loss = 0.0
    for task in range(2):
        amp = 1.0 + task
        xs, xq = torch.randn(5, 2), torch.randn(5, 2)
        inner = F.mse_loss(fwd(xs, ps), amp * xs[:, :1])
        g = torch.autograd.grad(inner, ps, create_graph=True)
        fast = [p - 0.01 * gi for p, gi in zip(ps, g)]
        meta_loss = meta_loss + F.mse_loss(fwd(xq, fast), amp * xq[:, :1])
    meta_opt.zero_grad()
    meta_grads = torch.autograd.grad(meta_loss, ps)  # <-- CUT
    meta_opt.step()
    return {"model": model, "meta_grads": meta_grads}
