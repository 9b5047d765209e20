"""Learning a pendulum's length from bob positions: the angle is recovered with
acos(y / L) from the simulated position. A sample starts exactly at rest at the bottom,
so y / L is exactly 1, acos's derivative is infinite there, and the length's grad is NaN.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.log_L"
EXPECT = "grad_nonfinite"


class BobModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_L = nn.Parameter(torch.tensor(0.0))

    def bob_xy(self, theta):
        L = self.log_L.exp()
        return L * torch.sin(theta), L * torch.cos(theta)

    def angle_from_position(self, y):
        L = self.log_L.exp()
        return torch.acos(y / L)  # <-- CUT


def run():
    torch.manual_seed(0)
    model = BobModel()
    theta_obs = torch.tensor([0.0, 0.3, -0.5, 0.8])
    x, y = model.bob_xy(theta_obs)
    theta_rec = model.angle_from_position(y)
    loss = ((theta_rec - theta_obs.abs()) ** 2).mean() + ((x - torch.sin(theta_obs) * 1.2) ** 2).mean()
    loss.backward()
    return {"model": model, "loss": loss}
