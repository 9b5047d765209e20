"""Rigid-body heading loss: the angle between simulated and observed heading
vectors is computed as acos(dot(normalize(a), normalize(b))). The first frame
starts from the observed state, so the dot product rounds to 1 or just above;
acos is NaN / its derivative infinite there, and detect_anomaly raises inside
backward ("returned nan values").
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Unicycle(nn.Module):
    def __init__(self, dt=0.1):
        super().__init__()
        self.dt = dt
        self.turn_gain = nn.Parameter(torch.tensor(0.8))
        self.speed = nn.Parameter(torch.tensor(1.0))

    def rollout(self, heading0, controls):
        h = heading0
        out = [h]
        for u in controls:
            ang = self.turn_gain * u * self.dt
            rot = torch.stack([torch.stack([torch.cos(ang), -torch.sin(ang)]),
                               torch.stack([torch.sin(ang), torch.cos(ang)])])
            h = rot @ h * self.speed
            out.append(h)
        return torch.stack(out)


def heading_angle_loss(pred, obs):
    cos = (F.normalize(pred, dim=-1) * F.normalize(obs, dim=-1)).sum(-1)
    return torch.acos(cos).mean()  # <-- CUT


def run():
    torch.manual_seed(0)
    sim = Unicycle()
    opt = torch.optim.Adam(sim.parameters(), lr=1e-2)
    heading0 = torch.tensor([0.6, 0.8])
    controls = torch.tensor([0.5, 0.2, -0.3, 0.1])
    with torch.no_grad():
        obs = Unicycle().rollout(heading0, controls * 1.3)
    with torch.autograd.detect_anomaly():
        pred = sim.rollout(heading0, controls)
        loss = heading_angle_loss(pred, obs)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"sim": sim, "loss": loss}
