"""Differentiable sliding-block simulation: fit the friction coefficient and the
initial push so the block stops at a target position. The step function reads
mu with .item() to use it in a Python max(), so the friction never gets a
gradient; the initial velocity still does.
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "sim.mu"
EXPECT = "grad_none"


class SlidingBlock(nn.Module):
    def __init__(self, dt=0.02, g=9.81):
        super().__init__()
        self.dt, self.g = dt, g
        self.mu = nn.Parameter(torch.tensor(0.3))
        self.v0 = nn.Parameter(torch.tensor(2.0))

    def step(self, x, v):
        mu = max(self.mu.item(), 0.0)  # <-- CUT
        decel = mu * self.g * torch.tanh(v / 0.05)
        v = v - self.dt * decel
        x = x + self.dt * v
        return x, v

    def rollout(self, n_steps):
        x, v = torch.tensor(0.0), self.v0
        traj = []
        for _ in range(n_steps):
            x, v = self.step(x, v)
            traj.append(x)
        return torch.stack(traj)


def run():
    torch.manual_seed(0)
    sim = SlidingBlock()
    opt = torch.optim.Adam(sim.parameters(), lr=1e-2)
    target_stop = torch.tensor(0.5)
    traj = sim.rollout(60)
    loss = (traj[-1] - target_stop) ** 2 + 1e-3 * (traj[1:] - traj[:-1]).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"sim": sim, "traj": traj, "loss": loss}
