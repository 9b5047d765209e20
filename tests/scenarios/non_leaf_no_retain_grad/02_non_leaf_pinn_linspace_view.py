"""PINN setup: collocation points are created with
torch.linspace(0, 1, 20, requires_grad=True).view(-1, 1). The name x is bound to
the view (a non-leaf), so x.grad is None after the residual loss's backward.
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "x"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    u_net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
    x = torch.linspace(0, 1, 20, requires_grad=True).view(-1, 1)  # <-- CUT
    u = u_net(x)
    loss = (u - torch.sin(3.0 * x)).pow(2).mean()
    loss.backward()
    return {"u_net": u_net, "x": x, "loss": loss}
