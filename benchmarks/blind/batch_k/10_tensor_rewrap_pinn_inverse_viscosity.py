"""Inverse PINN for Burgers' equation that also learns the viscosity nu. The per-batch
residual means are collected in a list and combined with torch.tensor(...) for a weighted
sum; the data term keeps backward working, but the learnable solver.log_nu.grad is None.
"""
import torch
import torch.nn as nn

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "solver.log_nu"
EXPECT = "grad_none"


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 24), nn.Tanh(), nn.Linear(24, 24), nn.Tanh(), nn.Linear(24, 1))

    def forward(self, x, t):
        return self.net(torch.cat([x, t], dim=1))


def grad(y, x):
    return torch.autograd.grad(y, x, torch.ones_like(y), create_graph=True)[0]


class BurgersInverse:
    def __init__(self, n_chunks=3):
        self.u = MLP()
        self.log_nu = nn.Parameter(torch.tensor(-2.0))
        self.n_chunks = n_chunks
        self.opt = torch.optim.Adam(list(self.u.parameters()) + [self.log_nu], lr=1e-3)

    def pde_loss(self, x, t):
        u = self.u(x, t)
        u_x, u_t = grad(u, x), grad(u, t)
        u_xx = grad(u_x, x)
        f = u_t + u * u_x - self.log_nu.exp() * u_xx
        chunk_means = [c.pow(2).mean() for c in f.chunk(self.n_chunks)]
        weights = torch.tensor([1.0, 1.0, 2.0])
        return (weights * torch.tensor(chunk_means)).sum()  # <-- CUT

    def step(self, x, t, x_d, t_d, u_d):
        loss = self.pde_loss(x, t) + (self.u(x_d, t_d) - u_d).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    solver = BurgersInverse()
    x = (torch.rand(60, 1) * 2 - 1).requires_grad_(True)
    t = torch.rand(60, 1).requires_grad_(True)
    x_d, t_d = torch.rand(20, 1) * 2 - 1, torch.rand(20, 1)
    u_d = -torch.sin(torch.pi * x_d) * torch.exp(-t_d)
    loss = solver.step(x, t, x_d, t_d, u_d)
    return {"solver": solver, "loss": loss}
