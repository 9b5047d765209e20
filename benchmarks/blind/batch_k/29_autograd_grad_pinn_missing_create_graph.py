"""Physics-only PINN for the ODE u' = k f(x) with the boundary condition u(0) = 0 built into
the ansatz. The derivative helper calls torch.autograd.grad without create_graph=True, so u_x is
a constant; the loss still has a grad_fn through log_k, but model.net[0].weight.grad is None.
"""
import torch
import torch.nn as nn

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.net[0].weight"
EXPECT = "grad_none"


class HardBCPINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
        self.log_k = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return x * self.net(x)


def derivative(y, x):
    return torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y), retain_graph=True)[0]  # <-- CUT


def run():
    torch.manual_seed(0)
    model = HardBCPINN()
    opt = torch.optim.LBFGS(model.parameters(), lr=0.1, max_iter=1)
    x = torch.linspace(0, 1, 40).unsqueeze(1).requires_grad_(True)
    f = torch.pi * torch.cos(torch.pi * x)

    def closure():
        opt.zero_grad()
        u = model(x)
        u_x = derivative(u, x)
        loss = (u_x - model.log_k.exp() * f).pow(2).mean()
        loss.backward()
        return loss

    loss = closure()
    return {"model": model, "loss": loss}
