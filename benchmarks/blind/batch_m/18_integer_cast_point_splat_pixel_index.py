"""Point-cloud splatting renderer used to refine a camera translation against a
target image. Projected coordinates are turned into pixel indices with `.long()`
and colours are scattered with index_add, so the point colours train but the
camera translation, which only enters through the indices, gets no gradient.
"""
import torch
import torch.nn as nn

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "renderer.cam_t"
EXPECT = "grad_none"


class PointSplatRenderer(nn.Module):
    def __init__(self, n_pts=40, res=16, focal=12.0):
        super().__init__()
        self.pts = nn.Parameter(torch.randn(n_pts, 3) * 0.3, requires_grad=False)
        self.colors = nn.Parameter(torch.rand(n_pts))
        self.cam_t = nn.Parameter(torch.tensor([0.0, 0.0, 3.0]))
        self.res, self.focal = res, focal

    def project(self):
        p = self.pts + self.cam_t
        uv = self.focal * p[:, :2] / p[:, 2:3] + self.res / 2
        return uv.clamp(0, self.res - 1)

    def forward(self):
        uv = self.project()
        ij = uv.round().long()  # <-- CUT
        flat = ij[:, 1] * self.res + ij[:, 0]
        img = torch.zeros(self.res * self.res).index_add(0, flat, self.colors)
        return img.reshape(self.res, self.res)


def run():
    torch.manual_seed(0)
    renderer = PointSplatRenderer()
    opt = torch.optim.Adam([p for p in renderer.parameters() if p.requires_grad], lr=1e-2)
    target = torch.rand(16, 16)
    loss = ((renderer() - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"renderer": renderer, "loss": loss}
