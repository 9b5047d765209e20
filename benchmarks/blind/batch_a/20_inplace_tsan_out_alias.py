"""TSAN super-resolution attention block (Jee-King/TSAN#3): `out = x` is an
alias, not a copy, and the following `out *= att` rescales x in place. x was
saved by the attention conv for its weight gradient, so backward raises
"modified by an inplace operation" (fix in the issue: out = x.clone()).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SpatialAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv_a = nn.Conv2d(c, 1, 3, padding=1)

    def forward(self, x):
        att = torch.sigmoid(self.conv_a(x))
        out = x
        out *= att  # <-- CUT
        return out


class TSAN(nn.Module):
    def __init__(self, c=8, scale=2):
        super().__init__()
        self.head = nn.Conv2d(3, c, 3, padding=1)
        self.body = nn.Conv2d(c, c, 3, padding=1)
        self.att = SpatialAttention(c)
        self.tail = nn.Sequential(nn.Conv2d(c, 3 * scale * scale, 3, padding=1), nn.PixelShuffle(scale))

    def forward(self, x):
        h = self.head(x)
        r = self.att(self.body(h))
        return self.tail(h + r)


def run():
    torch.manual_seed(0)
    model = TSAN()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    lr_img = torch.rand(2, 3, 8, 8)
    hr_img = torch.rand(2, 3, 16, 16)
    sr = model(lr_img)
    loss = F.l1_loss(sr, hr_img)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
