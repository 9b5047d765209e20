"""System identification of a damped spring (stiffness k, damping c) by
differentiating through an explicit-Euler rollout. The parameters are created as
a float32 leaf and then rebound to float64 "for integrator precision", so
params.grad (the name the user reads and steps) stays None.
"""
import torch

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "params"
EXPECT = "grad_none"


class SpringSim:
    def __init__(self, mass=1.0, dt=0.01, n_steps=100):
        self.m, self.dt, self.n = mass, dt, n_steps

    def rollout(self, k, c, x0=1.0, v0=0.0):
        x = torch.tensor(x0, dtype=torch.float64)
        v = torch.tensor(v0, dtype=torch.float64)
        xs = []
        for _ in range(self.n):
            a = (-k * x - c * v) / self.m
            v = v + self.dt * a
            x = x + self.dt * v
            xs.append(x)
        return torch.stack(xs)


def run():
    torch.manual_seed(0)
    sim = SpringSim()
    with torch.no_grad():
        observed = sim.rollout(torch.tensor(4.0, dtype=torch.float64), torch.tensor(0.3, dtype=torch.float64))
    params = torch.tensor([2.0, 0.1], requires_grad=True)
    params = params.to(torch.float64)  # <-- CUT
    traj = sim.rollout(params[0], params[1])
    loss = ((traj - observed) ** 2).mean()
    loss.backward()
    grad = params.grad
    return {"params": params, "loss": loss, "grad": grad}
