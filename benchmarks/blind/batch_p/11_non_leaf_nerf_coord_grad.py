"""Coordinate MLP (SDF-style) where the user wants the spatial gradient of the
loss with respect to the sample points, for an importance-sampling heuristic. The
grid is a leaf that requires grad, but the queried points are its reshaped
(non-leaf) copy, so pts.grad stays None after backward.
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "pts"
EXPECT = "grad_none"


class SirenLayer(nn.Module):
    def __init__(self, d_in, d_out, w0=30.0):
        super().__init__()
        self.lin, self.w0 = nn.Linear(d_in, d_out), w0

    def forward(self, x):
        return torch.sin(self.w0 * self.lin(x))


class CoordMLP(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.net = nn.Sequential(SirenLayer(3, width), SirenLayer(width, width, 1.0), nn.Linear(width, 1))

    def forward(self, p):
        return self.net(p)


def sphere_sdf(p, r=0.5):
    return p.norm(dim=-1, keepdim=True) - r


def run():
    torch.manual_seed(0)
    model = CoordMLP()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    axis = torch.linspace(-1, 1, 6)
    grid = torch.stack(torch.meshgrid(axis, axis, axis, indexing="ij"), dim=-1).requires_grad_(True)
    pts = grid.reshape(-1, 3)  # <-- CUT
    pred = model(pts)
    loss = (pred - sphere_sdf(pts.detach())).abs().mean()
    opt.zero_grad()
    loss.backward()
    importance = pts.grad.norm(dim=-1) if pts.grad is not None else None
    opt.step()
    return {"model": model, "pts": pts, "grid": grid, "importance": importance}
