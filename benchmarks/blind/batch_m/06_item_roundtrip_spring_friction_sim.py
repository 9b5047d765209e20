"""System identification with a differentiable damped-spring simulator: stiffness
k and friction mu are nn.Parameters fitted to an observed trajectory. The friction
term is read with `self.mu.item()` (copied from a version that used Python's max()
to keep it non-negative), so k trains and mu.grad stays None.
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "sim.mu"
EXPECT = "grad_none"


class SpringSim(nn.Module):
    def __init__(self, dt=0.05):
        super().__init__()
        self.k = nn.Parameter(torch.tensor(2.0))
        self.mu = nn.Parameter(torch.tensor(0.1))
        self.dt = dt

    def step(self, x, v):
        mu = max(self.mu.item(), 0.0)  # <-- CUT
        a = -self.k * x - mu * v
        v = v + self.dt * a
        x = x + self.dt * v
        return x, v

    def forward(self, x0, v0, steps):
        xs, x, v = [], x0, v0
        for _ in range(steps):
            x, v = self.step(x, v)
            xs.append(x)
        return torch.stack(xs)


def observed_trajectory(steps, k=3.0, mu=0.4, dt=0.05):
    x, v, xs = torch.tensor([1.0, 0.5]), torch.zeros(2), []
    for _ in range(steps):
        v = v + dt * (-k * x - mu * v)
        x = x + dt * v
        xs.append(x)
    return torch.stack(xs)


def run():
    torch.manual_seed(0)
    sim = SpringSim()
    opt = torch.optim.Adam(sim.parameters(), lr=0.05)
    target = observed_trajectory(40)
    pred = sim(torch.tensor([1.0, 0.5]), torch.zeros(2), 40)
    loss = ((pred - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"sim": sim, "opt": opt, "loss": loss}
