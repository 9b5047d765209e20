"""Control: Deformable 3D Gaussians. The deformation MLP is queried with gaussians.get_xyz.detach()
(a deliberate stop-gradient, so canonical positions are updated only by the RGB loss through
xyz + d_xyz), and the rendered image is logged via .detach().cpu().numpy(). The deformation network
still receives a normal gradient: deform.net[0].weight.grad is nonzero.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "deform.net[0].weight"
EXPECT = "grad_ok"


class GaussianModel:
    def __init__(self, n=24):
        self._xyz = nn.Parameter(torch.rand(n, 3) * 2 - 1)
        self._color = nn.Parameter(torch.rand(n, 3))
        self._log_scale = nn.Parameter(torch.full((n, 1), -2.0))

    @property
    def get_xyz(self):
        return self._xyz

    def params(self):
        return [self._xyz, self._color, self._log_scale]


class DeformModel(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3 + 1, hidden), nn.ReLU(), nn.Linear(hidden, 3 + 1))

    def step(self, xyz, t):
        out = self.net(torch.cat([xyz, t.expand(xyz.shape[0], 1)], -1))
        return out[:, :3] * 0.1, out[:, 3:] * 0.1


def render(xyz, color, log_scale, size=10):
    ys, xs = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size), indexing="ij")
    pix = torch.stack([xs, ys], -1).view(-1, 1, 2)
    d2 = ((pix - xyz[None, :, :2]) ** 2).sum(-1)
    w = torch.exp(-d2 / (2 * torch.exp(log_scale).T ** 2 + 1e-6))
    img = (w.unsqueeze(-1) * color[None]).sum(1) / (w.sum(1, keepdim=True) + 1e-6)
    return img.view(size, size, 3)


def run():
    torch.manual_seed(0)
    gaussians, deform = GaussianModel(), DeformModel()
    opt_g = torch.optim.Adam(gaussians.params(), lr=1e-3)
    opt_d = torch.optim.Adam(deform.parameters(), lr=1e-3)
    gt_image = torch.rand(10, 10, 3)
    time_input = torch.tensor([[0.3]])
    ast_noise = torch.randn(1, 1) * 0.01

    d_xyz, d_scaling = deform.step(gaussians.get_xyz.detach(), time_input + ast_noise)
    image = render(gaussians.get_xyz + d_xyz, gaussians._color, gaussians._log_scale + d_scaling)
    loss = F.l1_loss(image, gt_image)  # <-- CUT
    opt_g.zero_grad()
    opt_d.zero_grad()
    loss.backward()
    preview = np.clip(image.detach().cpu().numpy(), 0, 1)
    opt_g.step()
    opt_d.step()
    return {"deform": deform, "gaussians": gaussians, "loss": loss, "preview": preview}
