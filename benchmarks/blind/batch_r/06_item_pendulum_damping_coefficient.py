"""System identification with a differentiable pendulum: length and damping are learnable,
and the simulator's step reads the damping with `.item()` to pass it into a "physics
config" dict. The length gets a gradient from the trajectory loss, damping never does.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "sim.log_damping"
EXPECT = "grad_none"


class Pendulum(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_length = nn.Parameter(torch.tensor(0.2))
        self.log_damping = nn.Parameter(torch.tensor(-1.0))

    def physics(self):
        return {"g": 9.81, "L": self.log_length.exp(), "b": self.log_damping.exp().item()}  # <-- CUT

    def rollout(self, theta0, omega0, steps=40, dt=0.02):
        cfg = self.physics()
        theta, omega = theta0, omega0
        traj = []
        for _ in range(steps):
            alpha = -cfg["g"] / cfg["L"] * torch.sin(theta) - cfg["b"] * omega
            omega = omega + dt * alpha
            theta = theta + dt * omega
            traj.append(theta)
        return torch.stack(traj)


def run():
    torch.manual_seed(0)
    t = torch.arange(1, 41) * 0.02
    observed = 0.8 * torch.exp(-0.3 * t) * torch.cos(3.0 * t)
    sim = Pendulum()
    opt = torch.optim.Adam(sim.parameters(), lr=1e-2)
    pred = sim.rollout(torch.tensor(0.8), torch.tensor(0.0))
    loss = ((pred - observed) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"sim": sim, "opt": opt, "loss": loss}
