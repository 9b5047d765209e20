"""NeRF-style volume rendering: transmittance is the exclusive cumprod of
(1 - alpha). Instead of torch.cat([ones, T[:, :-1]]), the code shifts the
cumprod result in place with slice assignment, modifying the output that
cumprod saved for backward, so loss.backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "None"
EXPECT = "backward_error"


class TinyField(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 4))

    def forward(self, pts):
        out = self.net(pts)
        return torch.sigmoid(out[..., :3]), F.softplus(out[..., 3])


def render(field, origins, dirs, n_samples=16):
    t = torch.linspace(0.1, 2.0, n_samples)
    pts = origins[:, None, :] + dirs[:, None, :] * t[None, :, None]
    rgb, sigma = field(pts)
    delta = torch.full_like(sigma, (2.0 - 0.1) / n_samples)
    alpha = 1.0 - torch.exp(-sigma * delta)
    trans = torch.cumprod(1.0 - alpha + 1e-10, dim=-1)
    trans[:, 1:] = trans[:, :-1].clone()  # <-- CUT
    trans[:, 0] = 1.0
    weights = alpha * trans
    return (weights[..., None] * rgb).sum(1)


def run():
    torch.manual_seed(0)
    field = TinyField()
    opt = torch.optim.Adam(field.parameters(), lr=5e-4)
    origins = torch.zeros(8, 3)
    dirs = F.normalize(torch.randn(8, 3), dim=-1)
    target = torch.rand(8, 3)
    loss = F.mse_loss(render(field, origins, dirs), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"field": field, "loss": loss}
