"""Super-resolution fine-tuning with a VGG-style perceptual loss only (pixel weight
0 in the config). The target features belong under `torch.no_grad()`, but the
user put the SR output's features in the same block. The loss has no graph and
backward raises "element 0 of tensors does not require grad".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

CFG = {"scale": 2, "pixel_weight": 0.0, "perceptual_weight": 1.0}


class SRNet(nn.Module):
    def __init__(self, scale=2, c=8):
        super().__init__()
        self.head = nn.Conv2d(3, c, 3, padding=1)
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, c, 3, padding=1))
        self.up = nn.Sequential(nn.Conv2d(c, 3 * scale * scale, 3, padding=1), nn.PixelShuffle(scale))

    def forward(self, lr):
        h = self.head(lr)
        return self.up(h + self.body(h))


class FeatureNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.requires_grad_(False)

    def forward(self, x):
        return self.features(x)


class SRTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.G = SRNet(cfg["scale"])
        self.vgg = FeatureNet().eval()
        self.opt = torch.optim.Adam(self.G.parameters(), lr=1e-4)

    def step(self, lr, hr):
        sr = self.G(lr)
        with torch.no_grad():
            f_hr = self.vgg(hr)
            f_sr = self.vgg(sr)  # <-- CUT
        loss = self.cfg["perceptual_weight"] * F.l1_loss(f_sr, f_hr)
        if self.cfg["pixel_weight"] > 0:
            loss = loss + self.cfg["pixel_weight"] * F.l1_loss(sr, hr)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    tr = SRTrainer(CFG)
    lr, hr = torch.rand(2, 3, 6, 6), torch.rand(2, 3, 12, 12)
    loss = tr.step(lr, hr)
    return {"tr": tr, "loss": loss}
