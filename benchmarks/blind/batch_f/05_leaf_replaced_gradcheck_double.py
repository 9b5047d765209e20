"""Reproduces pytorch/pytorch#2362: inputs for checking a custom bilateral-grid slicing
layer were built as `Variable(torch.rand(...), requires_grad=True).cuda()`, so the stored
variable is the moved copy, not the leaf. Here the copy comes from `.double()` (checks run in
float64); the gradient w.r.t. the grid data is never stored: grid_data.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "grid_data"
EXPECT = "grad_none"


class BilateralSlice(nn.Module):
    """Trilinear lookup of a (B, C, D, H, W) grid at (x, y, guide) coordinates."""

    def forward(self, grid, guide):
        b, h, w = guide.shape
        ys, xs = torch.meshgrid(torch.linspace(-1, 1, h, dtype=guide.dtype),
                                torch.linspace(-1, 1, w, dtype=guide.dtype), indexing="ij")
        coords = torch.stack([xs.expand(b, h, w), ys.expand(b, h, w), guide * 2 - 1], dim=-1)
        out = F.grid_sample(grid, coords.unsqueeze(1), align_corners=True)
        return out.squeeze(2)


def run():
    torch.manual_seed(0)
    batch_size, gh, gw, d, nchans, h, w = 2, 4, 4, 3, 2, 6, 6
    grid_data = Variable(torch.rand(batch_size, nchans, d, gh, gw), requires_grad=True).double()  # <-- CUT
    guide_data = Variable(torch.rand(batch_size, h, w).double(), requires_grad=True)
    layer = BilateralSlice()
    out = layer(grid_data, guide_data)
    loss = out.pow(2).sum()
    loss.backward()
    return {"grid_data": grid_data, "guide_data": guide_data, "loss": loss, "layer": layer}
