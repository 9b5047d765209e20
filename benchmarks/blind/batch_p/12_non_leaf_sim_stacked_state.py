"""Projectile simulator where the launch position is built from two learnable
scalars, and the user inspects the gradient of the landing error with respect to
the stacked initial state. state0 is the output of torch.stack (a non-leaf), so
its .grad is None even though x0 and y0 get gradients.
"""
import torch

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "state0"
EXPECT = "grad_none"


class Projectile:
    def __init__(self, drag=0.1, dt=0.05, g=9.81):
        self.drag, self.dt, self.g = drag, dt, g

    def simulate(self, pos, vel, n=40):
        path = [pos]
        for _ in range(n):
            acc = torch.stack([torch.zeros(()), torch.tensor(-self.g)]) - self.drag * vel * vel.norm()
            vel = vel + self.dt * acc
            pos = pos + self.dt * vel
            path.append(pos)
        return torch.stack(path)


def run():
    torch.manual_seed(0)
    x0 = torch.tensor(0.0, requires_grad=True)
    y0 = torch.tensor(1.0, requires_grad=True)
    v0 = torch.tensor([4.0, 3.0], requires_grad=True)
    opt = torch.optim.SGD([x0, y0, v0], lr=0.05)
    state0 = torch.stack([x0, y0])  # <-- CUT
    path = Projectile().simulate(state0, v0)
    target = torch.tensor([2.5, 0.0])
    loss = ((path[-1] - target) ** 2).sum()
    opt.zero_grad()
    loss.backward()
    sens = state0.grad
    opt.step()
    return {"x0": x0, "y0": y0, "v0": v0, "state0": state0, "sens": sens}
