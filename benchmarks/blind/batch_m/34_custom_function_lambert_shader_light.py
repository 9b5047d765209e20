"""Inverse rendering with a custom Lambertian shading autograd.Function: mesh
vertex offsets and the light direction are both optimised against a target shading.
The Function's backward returns a gradient for the normals and None for the light,
so the vertex offsets train while light_dir.grad stays None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "scene.light_dir"
EXPECT = "grad_none"


class LambertShade(torch.autograd.Function):
    @staticmethod
    def forward(ctx, normals, light):
        l = light / light.norm()
        ndotl = normals @ l
        ctx.save_for_backward(normals, l, ndotl)
        return ndotl.clamp(min=0.0)

    @staticmethod
    def backward(ctx, grad_out):
        normals, l, ndotl = ctx.saved_tensors
        g = grad_out * (ndotl > 0).float()
        return g[:, None] * l[None, :], None  # <-- CUT


class Scene(nn.Module):
    def __init__(self, n_faces=30):
        super().__init__()
        self.base = F.normalize(torch.randn(n_faces, 3), dim=-1)
        self.offsets = nn.Parameter(torch.zeros(n_faces, 3))
        self.light_dir = nn.Parameter(torch.tensor([0.3, 0.5, 1.0]))

    def forward(self):
        normals = F.normalize(self.base + self.offsets, dim=-1)
        return LambertShade.apply(normals, self.light_dir)


def run():
    torch.manual_seed(0)
    scene = Scene()
    opt = torch.optim.Adam(scene.parameters(), lr=1e-2)
    target = torch.rand(30)
    loss = ((scene() - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"scene": scene, "loss": loss}
