"""pytorch/pytorch#37000 ("bad interaction between no_grad and numpy conversion"): since
numpy() is now allowed under no_grad, a preprocessing helper converts the generator's
output to numpy inside `with torch.no_grad()` to rank-equalize it, and hands back
torch.from_numpy(...). The perceptual loss is then computed on that copy, so the
generator's first conv never receives a gradient."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "gen.net[0].weight"
EXPECT = "grad_none"


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())

    def forward(self, x):
        return self.net(x)


def equalize(img):
    with torch.no_grad():
        arr = img.numpy()  # <-- CUT
        flat = arr.reshape(arr.shape[0], -1)
        ranks = flat.argsort(axis=1).argsort(axis=1).astype(np.float32) / flat.shape[1]
        mixed = 0.5 * flat + 0.5 * (2 * ranks - 1)
    return torch.from_numpy(mixed.reshape(arr.shape))


class FeatureNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        for p in self.parameters():
            p.requires_grad_(False)  # fixed perceptual feature extractor

    def forward(self, x):
        return self.conv(x)


def run():
    torch.manual_seed(0)
    gen, feat = Generator(), FeatureNet()
    opt = torch.optim.Adam(gen.parameters(), lr=2e-4)
    x = torch.randn(2, 3, 16, 16)
    target = torch.randn(2, 3, 16, 16).clamp(-1, 1)
    out = equalize(gen(x))
    out.requires_grad_(True)  # "fix" for the element-0 error that appeared next
    loss = F.l1_loss(feat(out), feat(target)) + F.mse_loss(out, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"gen": gen, "loss": loss}
