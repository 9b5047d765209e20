"""Reproduces daniel03c1/masked_wavelet_nerf#10: the learnable plane mask uses a
straight-through estimator, `(plane * (mask >= 0.5) - plane * mask).detach() + plane * mask`.
A user "simplified" it to `(plane * (mask >= 0.5)).detach()`, which also drops the STE term,
so the mask logits (and the planes) never receive a gradient: density_plane_mask.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.density_plane_mask[0]"
EXPECT = "grad_none"


class MaskedTensoRF(nn.Module):
    def __init__(self, n_comp=4, res=8, use_mask=True):
        super().__init__()
        self.use_mask = use_mask
        self.density_plane = nn.ParameterList(
            [nn.Parameter(0.1 * torch.randn(1, n_comp, res, res)) for _ in range(3)])
        self.density_line = nn.ParameterList(
            [nn.Parameter(0.1 * torch.randn(1, n_comp, res, 1)) for _ in range(3)])
        self.density_plane_mask = nn.ParameterList(
            [nn.Parameter(torch.ones(1, n_comp, res, res)) for _ in range(3)])
        self.basis = nn.Linear(n_comp, 1)

    def masked_plane(self, idx):
        plane = self.density_plane[idx]
        if self.use_mask:
            mask = torch.sigmoid(self.density_plane_mask[idx])
            plane = (plane * (mask >= 0.5)).detach()  # <-- CUT
        return plane

    def forward(self, coords):
        feats = 0
        grid = coords.view(1, -1, 1, 2)
        for idx in range(3):
            plane = self.masked_plane(idx)
            line = self.density_line[idx]
            p = F.grid_sample(plane, grid, align_corners=True)[0, :, :, 0]
            l_ = F.grid_sample(line, torch.stack([torch.zeros_like(grid[..., 0]), grid[..., 1]], -1),
                               align_corners=True)[0, :, :, 0]
            feats = feats + (p * l_).t()
        return F.softplus(self.basis(feats)).squeeze(-1)


def run():
    torch.manual_seed(0)
    model = MaskedTensoRF()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    coords = torch.rand(32, 2) * 2 - 1
    target_sigma = torch.rand(32)
    sigma = model(coords)
    mask_reg = sum(torch.sigmoid(m).mean() for m in model.density_plane_mask) * 0.0
    loss = F.mse_loss(sigma, target_sigma)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss, "mask_reg": mask_reg}
