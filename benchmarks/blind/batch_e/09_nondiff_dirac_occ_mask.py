"""Bidirectional registration with an occlusion (mask) loss (cwmok/DIRAC#13): the
occlusion maps come from `>` comparisons between forward/backward flow residuals and
a threshold, so loss_occ has no grad_fn (the maintainer agrees). In a mask-loss-only
ablation (NCC weight 0, so the NCC term is skipped) loss.backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class FlowNet(nn.Module):
    def __init__(self, nf=8):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(2, nf, 3, padding=1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(nf, 2, 3, padding=1))

    def forward(self, fixed, moving):
        return self.net(torch.cat([fixed, moving], 1))


def warp(img, flow):
    b, _, h, w = img.shape
    ys, xs = torch.meshgrid(torch.linspace(-1, 1, h), torch.linspace(-1, 1, w), indexing="ij")
    grid = torch.stack([xs, ys], -1).unsqueeze(0).expand(b, h, w, 2)
    return F.grid_sample(img, grid + flow.permute(0, 2, 3, 1), align_corners=True)


def ncc_loss(a, b):
    a = a - a.mean()
    b = b - b.mean()
    return -(a * b).mean() / (a.std() * b.std() + 1e-5)


def train_step(model, opt, X, Y, cfg):
    f_xy = model(X, Y)
    f_yx = model(Y, X)
    X_Y = warp(X, f_xy)
    Y_X = warp(Y, f_yx)
    diff_fw = (f_xy + warp(f_yx, f_xy)).pow(2).sum(1, keepdim=True)
    diff_bw = (f_yx + warp(f_xy, f_yx)).pow(2).sum(1, keepdim=True)
    thresh_fw = 0.01 * (f_xy.pow(2).sum(1, keepdim=True) + warp(f_yx, f_xy).pow(2).sum(1, keepdim=True)) + 0.5
    thresh_bw = 0.01 * (f_yx.pow(2).sum(1, keepdim=True) + warp(f_xy, f_yx).pow(2).sum(1, keepdim=True)) + 0.5
    occ_xy = (diff_fw > thresh_fw).float()  # <-- CUT
    occ_yx = (diff_bw > thresh_bw).float()
    loss_occ = occ_xy.mean() + occ_yx.mean()
    loss = cfg["w_occ"] * loss_occ
    if cfg["w_ncc"] > 0:
        loss = loss + cfg["w_ncc"] * (ncc_loss(X_Y, Y) + ncc_loss(Y_X, X))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def run():
    torch.manual_seed(0)
    model = FlowNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    X = torch.rand(1, 1, 16, 16)
    Y = torch.roll(X, 1, dims=3)
    cfg = {"w_ncc": 0.0, "w_occ": 0.01}
    loss = train_step(model, opt, X, Y, cfg)
    return {"model": model, "loss": loss}
