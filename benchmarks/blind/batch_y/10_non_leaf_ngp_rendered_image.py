"""torch-ngp style NeRF renderer: the user passes rays_o / rays_d with requires_grad=True and wants the
gradient of the photometric loss w.r.t. the rendered image. outputs["image"] is the composited result
inside render(), a non-leaf; without retain_grad() its .grad stays None, while the leaf rays_d gets one.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = 'outputs["image"]'
EXPECT = "grad_none"


class NeRFNetwork(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.sigma_net = nn.Sequential(nn.Linear(3, hidden), nn.ReLU(), nn.Linear(hidden, 1 + hidden))
        self.color_net = nn.Sequential(nn.Linear(hidden + 3, hidden), nn.ReLU(), nn.Linear(hidden, 3))

    def forward(self, x, d):
        h = self.sigma_net(x)
        sigma, geo = F.softplus(h[..., 0]), h[..., 1:]
        rgb = torch.sigmoid(self.color_net(torch.cat([geo, d], -1)))
        return sigma, rgb


class NeRFRenderer(nn.Module):
    def __init__(self, bound=1.0, num_steps=16):
        super().__init__()
        self.model = NeRFNetwork()
        self.bound, self.num_steps = bound, num_steps

    def render(self, rays_o, rays_d, staged=False, bg_color=None, perturb=False):
        z = torch.linspace(0.05, 2 * self.bound, self.num_steps)
        xyzs = rays_o[:, None] + rays_d[:, None] * z[None, :, None]
        dirs = F.normalize(rays_d, dim=-1)[:, None].expand_as(xyzs)
        sigmas, rgbs = self.model(xyzs, dirs)
        deltas = torch.cat([z[1:] - z[:-1], torch.full((1,), 1e10)])
        alphas = 1 - torch.exp(-sigmas * deltas)
        trans = torch.cumprod(torch.cat([torch.ones_like(alphas[:, :1]), 1 - alphas + 1e-10], -1), -1)[:, :-1]
        weights = alphas * trans
        depth = (weights * z).sum(-1)
        image = (weights.unsqueeze(-1) * rgbs).sum(dim=-2)  # <-- CUT
        if bg_color is not None:
            image = image + (1 - weights.sum(-1, keepdim=True)) * bg_color
        return {"image": image, "depth": depth}


def run():
    torch.manual_seed(0)
    renderer = NeRFRenderer()
    opt = torch.optim.Adam(renderer.parameters(), lr=1e-2)
    rays_o = torch.zeros(8, 3, requires_grad=True)
    rays_d = F.normalize(torch.randn(8, 3), dim=-1).requires_grad_(True)
    gt_rgb = torch.rand(8, 3)
    outputs = renderer.render(rays_o, rays_d, staged=False, bg_color=None, perturb=False)
    loss = F.mse_loss(outputs["image"], gt_rgb)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"renderer": renderer, "outputs": outputs, "rays_o": rays_o, "rays_d": rays_d, "loss": loss}
