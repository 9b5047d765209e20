"""A learnable per-channel gain is declared with self.register_buffer("gain", ...)
(copied from the running-stats code) instead of nn.Parameter. Buffers do not
require grad, so model.gain.grad is None and the gain never learns.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.gain"
EXPECT = "grad_none"


class GainConv(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.conv = nn.Conv2d(3, c, 3, padding=1)
        self.register_buffer("gain", torch.ones(1, c, 1, 1))  # <-- CUT

    def forward(self, x):
        return self.conv(x) * self.gain


def run():
    torch.manual_seed(0)
    model = GainConv()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(2, 3, 5, 5), torch.randn(2, 4, 5, 5)
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
