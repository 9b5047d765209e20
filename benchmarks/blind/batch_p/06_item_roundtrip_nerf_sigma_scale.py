"""Tiny NeRF-style coordinate MLP with volume rendering along rays. A learnable
density scale is meant to calibrate sigma, but render_rays() turns it into a
Python float with .item() before the alpha-compositing loop, so the scale never
learns; the MLP does.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "field.sigma_scale"
EXPECT = "grad_none"


def posenc(x, n_freq=4):
    feats = [x]
    for k in range(n_freq):
        feats += [torch.sin((2.0 ** k) * x), torch.cos((2.0 ** k) * x)]
    return torch.cat(feats, dim=-1)


class RadianceField(nn.Module):
    def __init__(self, n_freq=4, width=32):
        super().__init__()
        d_in = 3 * (1 + 2 * n_freq)
        self.mlp = nn.Sequential(nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 4))
        self.sigma_scale = nn.Parameter(torch.tensor(1.0))

    def forward(self, pts):
        raw = self.mlp(posenc(pts))
        return torch.sigmoid(raw[..., :3]), raw[..., 3]


def render_rays(field, origins, dirs, n_samples=8, near=0.5, far=2.0):
    t = torch.linspace(near, far, n_samples)
    pts = origins[:, None, :] + dirs[:, None, :] * t[None, :, None]
    rgb, raw_sigma = field(pts)
    scale = field.sigma_scale.item()  # <-- CUT
    delta = (far - near) / n_samples
    trans = torch.ones(origins.shape[0])
    color = torch.zeros(origins.shape[0], 3)
    for k in range(n_samples):
        alpha = 1.0 - torch.exp(-F.softplus(raw_sigma[:, k]) * scale * delta)
        color = color + (trans * alpha)[:, None] * rgb[:, k]
        trans = trans * (1.0 - alpha + 1e-10)
    return color


def run():
    torch.manual_seed(0)
    field = RadianceField()
    opt = torch.optim.Adam(field.parameters(), lr=5e-4)
    origins = torch.zeros(16, 3)
    dirs = F.normalize(torch.randn(16, 3), dim=-1)
    target = torch.rand(16, 3)
    pred = render_rays(field, origins, dirs)
    loss = F.mse_loss(pred, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"field": field, "loss": loss}
