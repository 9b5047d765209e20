"""Spatial-transformer crop: the sampling grid is built in pixel units
(`base * 8 + offset`) instead of the [-1, 1] normalised coordinates that
`F.grid_sample` expects. Every sample lands outside the image, zero padding
returns 0, and the localisation net's gradient is exactly zero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "loc.weight"
EXPECT = "grad_zero"


def run():
    torch.manual_seed(0)
    img = torch.rand(2, 1, 16, 16)
    target = torch.rand(2, 1, 8, 8)
    loc = nn.Linear(256, 2)
    opt = torch.optim.Adam(loc.parameters(), lr=1e-3)
    offset = loc(img.flatten(1)).view(2, 1, 1, 2)
    ys, xs = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
    base = torch.stack([xs, ys], dim=-1).unsqueeze(0) + 8.0
    grid = base * 8 + offset
    crop = F.grid_sample(img, grid, padding_mode="zeros", align_corners=False)  # <-- CUT
    loss = F.mse_loss(crop, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"loc": loc, "loss": loss}
