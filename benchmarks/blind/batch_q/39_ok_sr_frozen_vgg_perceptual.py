"""Control: super-resolution with a frozen pretrained feature net. The feature
net's parameters are requires_grad=False on purpose and the HR target features are
computed under no_grad, while the SR output's features keep their graph. The
generator gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "G.head.weight"
EXPECT = "grad_ok"


class SRNet(nn.Module):
    def __init__(self, c=8, scale=2):
        super().__init__()
        self.head = nn.Conv2d(3, c, 3, padding=1)
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.up = nn.Sequential(nn.Conv2d(c, 3 * scale ** 2, 3, padding=1), nn.PixelShuffle(scale))

    def forward(self, x):
        h = self.head(x)
        return self.up(h + self.body(h))


class PerceptualLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.feat = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
        for p in self.feat.parameters():
            p.requires_grad = False
        self.feat.eval()

    def forward(self, sr, hr):
        with torch.no_grad():
            f_hr = self.feat(hr)
        return F.mse_loss(self.feat(sr), f_hr)


def run():
    torch.manual_seed(0)
    G, perc = SRNet(), PerceptualLoss()
    opt = torch.optim.Adam(G.parameters(), lr=1e-4)
    lr, hr = torch.rand(2, 3, 6, 6), torch.rand(2, 3, 12, 12)
    sr = G(lr)
    loss = F.l1_loss(sr, hr) + 0.05 * perc(sr, hr)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"G": G, "loss": loss, "psnr": float(-10 * torch.log10(F.mse_loss(sr.detach(), hr)))}
