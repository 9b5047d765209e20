"""Tiny NeRF-style volume renderer. Transmittance should be the exclusive cumulative
product; the user takes the inclusive `torch.cumprod` and turns it exclusive with an
in-place division `T /= trans`. cumprod saved its output for backward, so the
backward pass raises "modified by an inplace operation" (CumprodBackward0).
"""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class RadianceField(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, hidden), nn.ReLU(), nn.Linear(hidden, 4))

    def forward(self, pts):
        out = self.net(pts)
        return torch.relu(out[..., 0]), torch.sigmoid(out[..., 1:])


def render_rays(field, origins, dirs, near=0.5, far=3.0, n_samples=16):
    t = torch.linspace(near, far, n_samples)
    pts = origins[:, None, :] + dirs[:, None, :] * t[None, :, None]
    sigma, rgb = field(pts)
    delta = torch.full_like(sigma, (far - near) / n_samples)
    alpha = 1.0 - torch.exp(-sigma * delta)
    trans = 1.0 - alpha + 1e-10
    T = torch.cumprod(trans, dim=-1)
    T /= trans  # <-- CUT
    weights = alpha * T
    return (weights[..., None] * rgb).sum(dim=1)


def run():
    torch.manual_seed(0)
    field = RadianceField()
    opt = torch.optim.Adam(field.parameters(), lr=5e-4)
    origins = torch.zeros(8, 3)
    dirs = nn.functional.normalize(torch.randn(8, 3), dim=-1)
    target = torch.rand(8, 3)
    loss = ((render_rays(field, origins, dirs) - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"field": field, "loss": loss}
