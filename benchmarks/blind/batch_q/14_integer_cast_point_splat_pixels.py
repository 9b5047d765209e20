"""Differentiable point splatting to fit a camera: projected points are turned into
pixel indices with `.long()` and their colours scattered into the image. The
per-point colours learn, but the focal length and translation get no gradient:
the integer pixel coordinates have no graph.
"""
import torch
import torch.nn as nn

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "cam.log_focal"
EXPECT = "grad_none"


class PinholeCamera(nn.Module):
    def __init__(self, H=16, W=16):
        super().__init__()
        self.H, self.W = H, W
        self.log_focal = nn.Parameter(torch.tensor(2.5))
        self.t = nn.Parameter(torch.tensor([0.0, 0.0, 4.0]))

    def project(self, pts):
        p = pts + self.t
        f = self.log_focal.exp()
        u = f * p[:, 0] / p[:, 2] + self.W / 2
        v = f * p[:, 1] / p[:, 2] + self.H / 2
        return u, v


class PointSplatter(nn.Module):
    def __init__(self, cam, n_pts):
        super().__init__()
        self.cam = cam
        self.colors = nn.Parameter(torch.full((n_pts,), 0.5))

    def forward(self, pts):
        u, v = self.cam.project(pts)
        ui = u.clamp(0, self.cam.W - 1).long()  # <-- CUT
        vi = v.clamp(0, self.cam.H - 1).long()
        img = torch.zeros(self.cam.H * self.cam.W)
        img = img.index_add(0, vi * self.cam.W + ui, self.colors)
        return img.view(self.cam.H, self.cam.W)


def run():
    torch.manual_seed(0)
    pts = torch.randn(40, 3) * 0.5
    cam = PinholeCamera()
    splat = PointSplatter(cam, pts.size(0))
    opt = torch.optim.Adam(splat.parameters(), lr=1e-2)
    target = torch.rand(16, 16)
    loss = ((splat(pts) - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"cam": cam, "splat": splat, "loss": loss}
