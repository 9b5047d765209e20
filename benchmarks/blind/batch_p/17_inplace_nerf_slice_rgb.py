"""NeRF-style field whose output head is squashed with tanh and split into rgb and
density by slicing. The renderer rescales rgb in place (rgb.mul_(0.5).add_(0.5)) to map it to
[0, 1]; rgb is a slice view of tanh's saved output, so backward raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Field(nn.Module):
    def __init__(self, width=32, n_freq=3):
        super().__init__()
        self.n_freq = n_freq
        self.mlp = nn.Sequential(nn.Linear(3 + 6 * n_freq, width), nn.ReLU(), nn.Linear(width, 4))

    def encode(self, x):
        f = [x] + [fn((2.0 ** k) * x) for k in range(self.n_freq) for fn in (torch.sin, torch.cos)]
        return torch.cat(f, -1)

    def forward(self, pts):
        raw = torch.tanh(self.mlp(self.encode(pts)))
        rgb, sigma = raw[..., :3], raw[..., 3:]
        return rgb, sigma


def composite(field, pts, deltas):
    rgb, sigma = field(pts)
    rgb.mul_(0.5).add_(0.5)  # <-- CUT
    alpha = 1 - torch.exp(-F.relu(sigma.squeeze(-1) + 1.0) * deltas)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha[:, :-1] + 1e-10], 1), 1)
    return ((trans * alpha)[..., None] * rgb).sum(1)


def run():
    torch.manual_seed(0)
    field = Field()
    opt = torch.optim.Adam(field.parameters(), lr=5e-4)
    pts = torch.randn(8, 6, 3)
    deltas = torch.full((8, 6), 0.25)
    color = composite(field, pts, deltas)
    loss = F.mse_loss(color, torch.rand(8, 3))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"field": field, "loss": loss}
