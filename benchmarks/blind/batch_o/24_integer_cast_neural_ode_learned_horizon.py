"""Neural ODE block with a learnable integration horizon T. The number of Euler
steps is computed as (T / dt).long() and the solver integrates n_steps * dt, so
the dynamics net trains but T.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.ode.T"
EXPECT = "grad_none"


class ODEBlock(nn.Module):
    def __init__(self, d=8, dt=0.1):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(d, 16), nn.Tanh(), nn.Linear(16, d))
        self.T = nn.Parameter(torch.tensor(1.0))
        self.dt = dt

    def forward(self, h):
        n_steps = (self.T / self.dt).long()  # <-- CUT
        for _ in range(int(n_steps)):
            h = h + self.dt * self.f(h)
        return h


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(5, 8)
        self.ode = ODEBlock()
        self.out = nn.Linear(8, 2)

    def forward(self, x):
        return self.out(self.ode(self.inp(x)))


def run():
    torch.manual_seed(0)
    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(16, 5), torch.randint(0, 2, (16,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
