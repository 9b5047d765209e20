"""PINN for a damped oscillator where the user wants du/dt at the collocation points for a
diagnostic plot and reads t.grad after a backward(create_graph=True). The points are made by
torch.rand(..., requires_grad=True) * T, which is not a leaf, so solver.t.grad is None.
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "solver.t"
EXPECT = "grad_none"


class OscillatorNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, t):
        return self.net(t)


class OscillatorSolver:
    def __init__(self, T=5.0, n=50, k=4.0, c=0.4):
        self.model, self.k, self.c, self.T, self.n = OscillatorNet(), k, c, T, n
        self.t = None
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def sample_points(self):
        self.t = torch.rand(self.n, 1, requires_grad=True) * self.T  # <-- CUT
        return self.t

    def physics_loss(self):
        self.sample_points()
        u = self.model(self.t)
        u_t = torch.autograd.grad(u, self.t, torch.ones_like(u), create_graph=True)[0]
        u_tt = torch.autograd.grad(u_t, self.t, torch.ones_like(u_t), create_graph=True)[0]
        return (u_tt + self.c * u_t + self.k * u).pow(2).mean()

    def ic_loss(self):
        t0 = torch.zeros(1, 1, requires_grad=True)
        u0 = self.model(t0)
        v0 = torch.autograd.grad(u0, t0, torch.ones_like(u0), create_graph=True)[0]
        return (u0 - 1.0).pow(2).sum() + v0.pow(2).sum()

    def step(self):
        loss = self.physics_loss() + self.ic_loss()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    def du_dt_at_collocation(self):
        t = self.sample_points()
        self.model(t).sum().backward(create_graph=True)
        return self.t.grad


def run():
    torch.manual_seed(0)
    solver = OscillatorSolver()
    loss = solver.step()
    diag = solver.du_dt_at_collocation()
    return {"solver": solver, "loss": loss, "diag": diag}
