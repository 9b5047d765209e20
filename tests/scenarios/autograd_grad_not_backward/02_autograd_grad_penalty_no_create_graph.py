"""An input-gradient (Jacobian) regulariser computes
grads = torch.autograd.grad(out.sum(), x) without create_graph=True and then
backpropagates the penalty. The gradients carry no graph, so backward raises.
"""
import torch
import torch.nn as nn

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    critic = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
    x = torch.randn(10, 3, requires_grad=True)
    out = critic(x)
    grads = torch.autograd.grad(out.sum(), x)[0]  # <-- CUT
    penalty = ((grads.norm(dim=1) - 1.0) ** 2).mean()
    opt.zero_grad()
    penalty.backward()
    opt.step()
    return {"critic": critic, "loss": penalty}
