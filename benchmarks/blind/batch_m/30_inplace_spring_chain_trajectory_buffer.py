"""Differentiable mass-spring chain for learning the spring stiffness from a
recorded motion. Positions are written into a preallocated trajectory tensor,
`traj[t + 1] = ...`; the force `-k * traj[t]` saved a view of that buffer for k's
gradient, so the next slice write bumps its version and backward raises.
"""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SpringChain(nn.Module):
    def __init__(self, n_masses=4, dt=0.02):
        super().__init__()
        self.log_k = nn.Parameter(torch.tensor(0.5))
        self.damping = nn.Parameter(torch.tensor(0.1))
        self.dt = dt
        self.n = n_masses

    def simulate(self, x0, steps):
        traj = torch.zeros(steps + 1, self.n)
        traj[0] = x0
        vel = torch.zeros(self.n)
        k = self.log_k.exp()
        for t in range(steps):
            lap = torch.roll(traj[t], 1) + torch.roll(traj[t], -1) - 2 * traj[t]
            acc = k * lap - k * traj[t] - self.damping * vel
            vel = vel + self.dt * acc
            traj[t + 1] = traj[t] + self.dt * vel  # <-- CUT
        return traj


def run():
    torch.manual_seed(0)
    sim = SpringChain()
    opt = torch.optim.Adam(sim.parameters(), lr=1e-2)
    x0 = torch.randn(4)
    observed = torch.randn(21, 4) * 0.1
    traj = sim.simulate(x0, 20)
    loss = ((traj - observed) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"sim": sim, "loss": loss}
