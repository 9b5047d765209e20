"""Gaussian-splatting densification (nerfstudio-project/gsplat#390): the
rasterizer returns info["means2D"], the projected 2D means, and the trainer
reads info["means2D"].grad after loss.backward() to decide which Gaussians to
split. means2D is a non-leaf and nobody called retain_grad(), so .grad is None.
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "info['means2D']"
EXPECT = "grad_none"


def rasterization(means, scales, colors, viewmat, K, width=8, height=8):
    cam = means @ viewmat[:3, :3].T + viewmat[:3, 3]
    means2D = (cam[:, :2] / cam[:, 2:3]) @ K[:2, :2].T + K[:2, 2]  # <-- CUT
    ys, xs = torch.meshgrid(torch.arange(height).float(), torch.arange(width).float(), indexing="ij")
    pix = torch.stack([xs, ys], -1).view(-1, 1, 2)
    d2 = ((pix - means2D[None]) ** 2).sum(-1)
    w = torch.exp(-0.5 * d2 / (scales.exp() ** 2)[None])
    img = (w @ colors) / (w.sum(-1, keepdim=True) + 1e-6)
    info = {"means2D": means2D, "radii": scales.exp() * 3}
    return img.view(height, width, 3), info


def run():
    torch.manual_seed(0)
    N = 16
    splats = nn.ParameterDict({
        "means": nn.Parameter(torch.randn(N, 3) * 0.5 + torch.tensor([0.0, 0.0, 4.0])),
        "scales": nn.Parameter(torch.zeros(N)),
        "colors": nn.Parameter(torch.rand(N, 3)),
    })
    optimizer = torch.optim.Adam(splats.parameters(), lr=1e-2)
    viewmat = torch.eye(4)
    K = torch.tensor([[8.0, 0.0, 4.0], [0.0, 8.0, 4.0], [0.0, 0.0, 1.0]])
    gt_image = torch.rand(8, 8, 3)
    renders, info = rasterization(splats["means"], splats["scales"], splats["colors"], viewmat, K)
    loss = (renders - gt_image).abs().mean()
    optimizer.zero_grad()
    loss.backward()
    grads2d = info["means2D"].grad  # used for densification
    optimizer.step()
    return {"splats": splats, "info": info, "loss": loss, "grads2d": grads2d}
