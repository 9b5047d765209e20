"""Group DRO: the per-group mean losses are collected in a Python list and
turned into a vector with `torch.as_tensor(group_losses)` for the
exponentiated-gradient update of the group weights q. as_tensor copies the
0-d tensors' values, so the robust loss has no grad_fn and backward raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    n_groups, eta = 4, 0.01
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    q = torch.ones(n_groups) / n_groups
    x, y = torch.randn(32, 10), torch.randint(0, 2, (32,))
    g = torch.arange(32) % n_groups
    per_sample = F.cross_entropy(model(x), y, reduction="none")
    group_losses = [per_sample[g == k].mean() for k in range(n_groups)]
    losses = torch.as_tensor(group_losses)  # <-- CUT
    q = q * torch.exp(eta * losses)
    q = q / q.sum()
    loss = (q * losses).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss, "q": q}
