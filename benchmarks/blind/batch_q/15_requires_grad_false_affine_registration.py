"""Intensity-based affine image registration by direct optimisation: the affine
matrix is initialised with `torch.eye(2, 3)` and handed to Adam together with a
learnable intensity gain/bias. Only the gain/bias were created with
requires_grad=True, so backward runs and theta never gets a gradient.
"""
import torch
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "reg.theta"
EXPECT = "grad_none"


class AffineRegistration:
    def __init__(self, shape, lr=1e-2):
        self.shape = shape
        self.theta = torch.eye(2, 3).unsqueeze(0)  # <-- CUT
        self.gain = torch.ones(1, requires_grad=True)
        self.bias = torch.zeros(1, requires_grad=True)
        self.opt = torch.optim.Adam([self.theta, self.gain, self.bias], lr=lr)

    def warp(self, moving):
        grid = F.affine_grid(self.theta, self.shape, align_corners=False)
        return self.gain * F.grid_sample(moving, grid, align_corners=False) + self.bias

    def ncc_loss(self, a, b):
        a = a - a.mean()
        b = b - b.mean()
        return 1 - (a * b).sum() / (a.norm() * b.norm() + 1e-8) + F.mse_loss(a, b)

    def step(self, moving, fixed):
        loss = self.ncc_loss(self.warp(moving), fixed)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    fixed = torch.rand(1, 1, 12, 12)
    moving = torch.roll(fixed, shifts=1, dims=-1)
    reg = AffineRegistration(fixed.shape)
    loss = reg.step(moving, fixed)
    return {"reg": reg, "loss": loss}
