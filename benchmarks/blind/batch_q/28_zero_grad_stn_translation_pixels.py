"""Spatial-transformer registration: the translation of the affine matrix is set in
pixels (6.0) instead of grid_sample's normalised [-1, 1] units, so every sample
falls outside the image. With padding_mode="zeros" the warped image is all zeros
and the gradient with respect to theta is exactly zero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "stn.theta"
EXPECT = "grad_zero"

CFG = {"init_shift_px": (6.0, -6.0), "padding_mode": "zeros"}


class AffineSTN(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        tx, ty = cfg["init_shift_px"]
        self.theta = nn.Parameter(torch.tensor([[[1.0, 0.0, tx], [0.0, 1.0, ty]]]))
        self.padding_mode = cfg["padding_mode"]

    def forward(self, moving):
        grid = F.affine_grid(self.theta.expand(moving.size(0), 2, 3), moving.shape, align_corners=False)
        return F.grid_sample(moving, grid, padding_mode=self.padding_mode, align_corners=False)  # <-- CUT


def run():
    torch.manual_seed(0)
    stn = AffineSTN(CFG)
    opt = torch.optim.Adam(stn.parameters(), lr=1e-2)
    fixed = torch.rand(1, 1, 10, 10)
    moving = torch.roll(fixed, shifts=(1, 2), dims=(-2, -1))
    loss = F.mse_loss(stn(moving), fixed)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"stn": stn, "loss": loss}
