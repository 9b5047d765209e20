"""Differentiable rocket simulation used to tune a thrust parameter so the rocket
reaches a target altitude. Velocity is clamped to a speed limit from the config,
which is in km/s while the simulation runs in m/s; the velocity is saturated from
the first step, so the thrust's gradient exists but is exactly zero everywhere.
"""
import torch
import torch.nn as nn

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "rocket.thrust"
EXPECT = "grad_zero"

CONFIG = {"dt": 0.1, "steps": 30, "v_max": 0.34, "target_alt": 150.0, "mass": 2.0}


class Rocket(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.thrust = nn.Parameter(torch.tensor([30.0]))
        self.drag = nn.Parameter(torch.tensor([0.05]), requires_grad=False)
        self.cfg = cfg

    def forward(self):
        c = self.cfg
        h, v = torch.zeros(1), torch.zeros(1)
        for _ in range(c["steps"]):
            acc = self.thrust / c["mass"] - 9.81 - self.drag * v
            v = torch.clamp(v + c["dt"] * acc, -c["v_max"], c["v_max"])  # <-- CUT
            h = h + c["dt"] * v
        return h


def run():
    torch.manual_seed(0)
    rocket = Rocket(CONFIG)
    opt = torch.optim.SGD([rocket.thrust], lr=0.1)
    alt = rocket()
    loss = ((alt - CONFIG["target_alt"]) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"rocket": rocket, "alt": alt, "loss": loss}
