"""Differentiable bouncing-ball simulator fitting the coefficient of restitution
to an observed bounce height. The config gives the initial guess 1.4 (a velocity
gain from another tool), and the simulator clamps it to [0, 1]: the clamp is
saturated, so restitution.grad is exactly zero.
"""
import torch
import torch.nn as nn

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "sim.restitution"
EXPECT = "grad_zero"

CONFIG = {"restitution_init": 1.4, "dt": 0.01, "steps": 120, "g": 9.81}


class BouncingBall(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.restitution = nn.Parameter(torch.tensor(cfg["restitution_init"]))

    def forward(self, h0):
        e = self.restitution.clamp(0.0, 1.0)  # <-- CUT
        y, v = h0, torch.tensor(0.0)
        heights = []
        for _ in range(self.cfg["steps"]):
            v = v - self.cfg["g"] * self.cfg["dt"]
            y = y + v * self.cfg["dt"]
            if y.item() < 0.0:
                y = -y * e
                v = -v * e
            heights.append(y)
        return torch.stack(heights)


def run():
    torch.manual_seed(0)
    sim = BouncingBall(CONFIG)
    opt = torch.optim.Adam(sim.parameters(), lr=1e-2)
    heights = sim(torch.tensor(1.0))
    observed_peak = torch.tensor(0.6)
    loss = (heights[60:].max() - observed_peak) ** 2
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"sim": sim, "loss": loss, "heights": heights.detach()}
