"""Differentiable pose refinement (diff-dope style): the user switched the rgb and
depth loss weights to 0.0 to optimise the object pose from the silhouette alone,
with `mask = render_rgb > 0`. The comparison has no gradient, and the zero-weighted
terms still connect the graph, so the pose parameters get an all-zero .grad.
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "obj.position"
EXPECT = "grad_zero"


class Object3D(nn.Module):
    def __init__(self, n_points=40):
        super().__init__()
        g = torch.Generator().manual_seed(1)
        self.register_buffer("points", torch.rand(n_points, 3, generator=g) * 0.4 - 0.2)
        self.position = nn.Parameter(torch.tensor([0.05, -0.03, 1.0]))
        self.rotation = nn.Parameter(torch.zeros(3))

    def transformed(self):
        rx, ry, rz = self.rotation
        cz, sz = torch.cos(rz), torch.sin(rz)
        R = torch.stack([torch.stack([cz, -sz, rx * 0]), torch.stack([sz, cz, ry * 0]),
                         torch.stack([rx * 0, ry * 0, cz * 0 + 1])])
        return self.points @ R.t() + self.position


def render(points, res=16, sigma=0.05):
    # soft splatting of projected points into an image (depth + rgb)
    uv = points[:, :2] / points[:, 2:3]
    ys = torch.linspace(-0.4, 0.4, res)
    gy, gx = torch.meshgrid(ys, ys, indexing="ij")
    grid = torch.stack([gx, gy], -1).view(-1, 1, 2)
    w = torch.exp(-((grid - uv[None]) ** 2).sum(-1) / (2 * sigma ** 2))     # pix x pts
    rgb = (w.sum(-1) - 0.3).clamp(min=0).view(res, res)
    depth = (w * points[None, :, 2]).sum(-1) / (w.sum(-1) + 1e-6)
    return {"rgb": rgb, "depth": depth.view(res, res)}


class DiffDope:
    def __init__(self, obj, gt, weights):
        self.obj, self.gt, self.weights = obj, gt, weights
        self.optimizer = torch.optim.Adam(obj.parameters(), lr=1e-2)

    def loss(self):
        renders = render(self.obj.transformed())
        loss_rgb = (renders["rgb"] - self.gt["rgb"]).abs().mean()
        loss_depth = (renders["depth"] - self.gt["depth"]).abs().mean()
        mask = (renders["rgb"] > 0).float()  # <-- CUT
        loss_mask = (mask - self.gt["mask"]).abs().mean()
        return (self.weights["rgb"] * loss_rgb + self.weights["depth"] * loss_depth
                + self.weights["mask"] * loss_mask)

    def step(self):
        self.optimizer.zero_grad()
        loss = self.loss()
        loss.backward()
        return loss


def run():
    torch.manual_seed(0)
    target_obj = Object3D()
    with torch.no_grad():
        target_obj.position.copy_(torch.tensor([0.0, 0.0, 1.0]))
        gt = render(target_obj.transformed())
        gt["mask"] = (gt["rgb"] > 0).float()
    obj = Object3D()
    dd = DiffDope(obj, gt, weights={"rgb": 0.0, "depth": 0.0, "mask": 1.0})
    loss = dd.step()
    return {"obj": obj, "dd": dd, "loss": loss}
