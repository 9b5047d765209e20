"""Deformable registration (VoxelMorph-like): a small UNet predicts a dense flow
field that warps the moving image with grid_sample. To debug, the user reads
`flow.grad` after backward; flow is the network's output, a non-leaf without
retain_grad(), so it is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "flow"
EXPECT = "grad_none"


class FlowNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.LeakyReLU(0.2))
        self.flow = nn.Conv2d(8, 2, 3, padding=1)
        nn.init.normal_(self.flow.weight, std=1e-2)

    def forward(self, moving, fixed):
        return self.flow(self.enc(torch.cat([moving, fixed], 1)))


def warp(img, flow):
    B, _, H, W = img.shape
    base = F.affine_grid(torch.eye(2, 3).unsqueeze(0).repeat(B, 1, 1), img.shape, align_corners=False)
    return F.grid_sample(img, base + flow.permute(0, 2, 3, 1), align_corners=False)


def smoothness(flow):
    dx = flow[:, :, :, 1:] - flow[:, :, :, :-1]
    dy = flow[:, :, 1:, :] - flow[:, :, :-1, :]
    return (dx ** 2).mean() + (dy ** 2).mean()


def run():
    torch.manual_seed(0)
    net = FlowNet()
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    moving, fixed = torch.rand(1, 1, 10, 10), torch.rand(1, 1, 10, 10)
    flow = net(moving, fixed)  # <-- CUT
    loss = F.mse_loss(warp(moving, flow), fixed) + 0.01 * smoothness(flow)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"net": net, "flow": flow, "loss": loss}
