"""Fitting circle primitives to a target silhouette with a hand-written renderer.
Coverage is a hard inside test `(dist < radius).float()`, so the image has no path
back to the centres; a small radius prior keeps backward running and the radii
get a gradient from it, but the centres' .grad is None.
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "scene.centers"
EXPECT = "grad_none"


class CircleScene(nn.Module):
    def __init__(self, n=3, res=16):
        super().__init__()
        self.centers = nn.Parameter(torch.rand(n, 2))
        self.log_r = nn.Parameter(torch.full((n,), -1.5))
        ys, xs = torch.meshgrid(torch.linspace(0, 1, res), torch.linspace(0, 1, res), indexing="ij")
        self.register_buffer("pix", torch.stack([xs, ys], -1).reshape(-1, 2))
        self.res = res

    def render(self):
        dist = torch.cdist(self.pix, self.centers)
        inside = (dist < self.log_r.exp()).float()  # <-- CUT
        return inside.max(dim=1).values.reshape(self.res, self.res)


def run():
    torch.manual_seed(0)
    scene = CircleScene()
    opt = torch.optim.Adam(scene.parameters(), lr=1e-2)
    target = torch.zeros(16, 16)
    target[4:12, 4:12] = 1.0
    img = scene.render()
    loss = ((img - target) ** 2).mean() + 1e-3 * scene.log_r.exp().pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"scene": scene, "img": img, "loss": loss}
