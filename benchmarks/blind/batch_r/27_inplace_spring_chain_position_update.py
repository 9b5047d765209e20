"""Differentiable mass-spring chain: the learnable stiffness is fitted to a target energy.
Positions are advanced in place (`pos += dt * vel`) after the elastic energy term used
pos**2, which saved pos for backward, so loss.backward() raises the version-counter error.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SpringChain(torch.nn.Module):
    def __init__(self, n=5):
        super().__init__()
        self.log_k = torch.nn.Parameter(torch.zeros(n))
        self.mass = 1.0

    def simulate(self, pos0, vel0, steps=5, dt=0.05):
        k = self.log_k.exp()
        pos = pos0 * 1.0
        vel = vel0 * 1.0
        energy = 0.0
        for _ in range(steps):
            energy = energy + 0.5 * (k * pos ** 2).sum()
            vel = vel - dt * k * pos / self.mass
            pos += dt * vel  # <-- CUT
        return pos, energy


def run():
    torch.manual_seed(0)
    model = SpringChain()
    pos0 = torch.randn(5)
    vel0 = torch.zeros(5)
    pos_T, energy = model.simulate(pos0, vel0)
    loss = (energy - 3.0) ** 2 + (pos_T ** 2).mean()
    loss.backward()
    return {"model": model, "loss": loss}
