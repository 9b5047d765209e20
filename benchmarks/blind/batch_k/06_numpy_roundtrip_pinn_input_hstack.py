"""PINN for the 1D heat equation whose network input is assembled with np.hstack from the
collocation coordinates x and t (a habit from a numpy data pipeline). u no longer depends on x,
so torch.autograd.grad(u, x, ...) for u_x raises "appears to not have been used in the graph".
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class PINN(nn.Module):
    def __init__(self, width=20):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(),
                                 nn.Linear(width, 1))

    def forward(self, x, t):
        xt = np.hstack([x.detach().numpy(), t.detach().numpy()])  # <-- CUT
        return self.net(torch.from_numpy(xt).float())


def d(y, x):
    return torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y), create_graph=True)[0]


class HeatSolver:
    def __init__(self, alpha=0.1, n_col=64):
        self.model, self.alpha, self.n_col = PINN(), alpha, n_col
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def residual(self, x, t):
        u = self.model(x, t)
        u_t = d(u, t)
        u_xx = d(d(u, x), x)
        return u_t - self.alpha * u_xx

    def step(self, rng):
        x = torch.tensor(rng.uniform(0, 1, (self.n_col, 1)), dtype=torch.float32, requires_grad=True)
        t = torch.tensor(rng.uniform(0, 1, (self.n_col, 1)), dtype=torch.float32, requires_grad=True)
        x0 = torch.linspace(0, 1, 16).unsqueeze(1)
        ic = self.model(x0, torch.zeros_like(x0)) - torch.sin(np.pi * x0)
        loss = self.residual(x, t).pow(2).mean() + ic.pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    solver = HeatSolver()
    loss = solver.step(rng)
    return {"solver": solver, "loss": loss}
