"""Learnable piecewise-constant calibration: inputs are assigned to bins with
`torch.bucketize(x, edges)` and mapped to per-bin values. The bin values learn,
but bucketize returns integer indices, so the learnable edges never get a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "calib.edges"
EXPECT = "grad_none"


class BinCalibrator(nn.Module):
    def __init__(self, n_bins=6):
        super().__init__()
        self.edges = nn.Parameter(torch.linspace(-2, 2, n_bins - 1))
        self.values = nn.Parameter(torch.zeros(n_bins))

    def forward(self, s):
        idx = torch.bucketize(s, torch.sort(self.edges).values)  # <-- CUT
        return s + self.values[idx]


def run():
    torch.manual_seed(0)
    calib = BinCalibrator()
    opt = torch.optim.SGD(calib.parameters(), lr=0.1)
    s = torch.randn(50)
    y = s * 1.3 + 0.2
    opt.zero_grad()
    loss = F.mse_loss(calib(s), y)
    loss.backward()
    opt.step()
    return {"calib": calib, "loss": loss}
