"""Camera calibration by reprojection: a pinhole camera with a learnable field of
view and translation is fitted to observed 2-D keypoints. The focal length is
computed with numpy from `float(self.fov)`, so the translation trains while the
field of view never receives a gradient.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "cam.fov"
EXPECT = "grad_none"


class PinholeCamera(nn.Module):
    def __init__(self, width=64, height=48):
        super().__init__()
        self.width, self.height = width, height
        self.fov = nn.Parameter(torch.tensor(0.9))
        self.t = nn.Parameter(torch.tensor([0.0, 0.0, 4.0]))

    def focal(self):
        return 0.5 * self.width / np.tan(float(self.fov) / 2.0)  # <-- CUT

    def project(self, pts):
        p = pts + self.t
        f = self.focal()
        u = f * p[:, 0] / p[:, 2] + self.width / 2
        v = f * p[:, 1] / p[:, 2] + self.height / 2
        return torch.stack([u, v], dim=-1)


class Calibrator:
    def __init__(self, cam, lr=1e-2):
        self.cam = cam
        self.opt = torch.optim.Adam(cam.parameters(), lr=lr)

    def step(self, pts3d, kps2d):
        loss = ((self.cam.project(pts3d) - kps2d) ** 2).sum(-1).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    cam = PinholeCamera()
    pts3d = torch.randn(20, 3) * 0.5
    kps2d = torch.rand(20, 2) * torch.tensor([64.0, 48.0])
    calib = Calibrator(cam)
    loss = calib.step(pts3d, kps2d)
    return {"cam": cam, "calib": calib, "loss": loss}
