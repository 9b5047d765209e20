"""Mesh fitting with a Chamfer loss against a target point cloud. The per-vertex
offsets are created as a leaf with requires_grad=True, then rebound with
`offsets = offsets.double()` for precision. The optimizer holds the old float
leaf; the new double tensor is a non-leaf and `offsets.grad` is None.
"""
import torch

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "offsets"
EXPECT = "grad_none"


def chamfer(a, b):
    d = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
    return d.min(1).values.mean() + d.min(0).values.mean()


def laplacian_reg(v, nbrs):
    return ((v - v[nbrs].mean(1)) ** 2).sum(-1).mean()


def run():
    torch.manual_seed(0)
    verts = torch.randn(20, 3, dtype=torch.float64)
    nbrs = torch.randint(0, 20, (20, 4))
    target = torch.randn(30, 3, dtype=torch.float64)
    offsets = torch.zeros(20, 3, requires_grad=True)
    opt = torch.optim.Adam([offsets], lr=1e-2)
    offsets = offsets.double()  # <-- CUT
    new_verts = verts + offsets
    loss = chamfer(new_verts, target) + 0.1 * laplacian_reg(new_verts, nbrs)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"offsets": offsets, "loss": loss}
