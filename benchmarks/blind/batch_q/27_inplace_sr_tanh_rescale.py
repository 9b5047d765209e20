"""ESRGAN-style generator whose tail maps tanh output to [0, 1] in place with
`out.mul_(0.5).add_(0.5)` to save memory. tanh saved its output for backward and
the in-place rescale overwrites it, so the L1 + perceptual loss backward raises
"modified by an inplace operation". The frozen feature net is a legitimate cut.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class RRDBLite(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, padding=1)
        self.c2 = nn.Conv2d(2 * c, c, 3, padding=1)

    def forward(self, x):
        h = F.leaky_relu(self.c1(x), 0.2)
        return x + 0.2 * self.c2(torch.cat([x, h], 1))


class Generator(nn.Module):
    def __init__(self, c=8, scale=2):
        super().__init__()
        self.head = nn.Conv2d(3, c, 3, padding=1)
        self.body = nn.Sequential(RRDBLite(c), RRDBLite(c))
        self.up = nn.Conv2d(c, 3 * scale * scale, 3, padding=1)
        self.shuffle = nn.PixelShuffle(scale)

    def forward(self, x):
        h = self.head(x)
        out = torch.tanh(self.shuffle(self.up(h + self.body(h))))
        out.mul_(0.5).add_(0.5)  # <-- CUT
        return out


def run():
    torch.manual_seed(0)
    G = Generator()
    feat = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU()).requires_grad_(False)
    opt = torch.optim.Adam(G.parameters(), lr=2e-4)
    lr, hr = torch.rand(2, 3, 6, 6), torch.rand(2, 3, 12, 12)
    sr = G(lr)
    with torch.no_grad():
        f_hr = feat(hr)
    loss = F.l1_loss(sr, hr) + 0.1 * F.l1_loss(feat(sr), f_hr)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"G": G, "loss": loss}
