"""SRGAN trainer: `set_requires_grad(self.G, False)` is called in the D step to
save compute, next to the usual (legitimate) frozen VGG and the D freeze in the
G step. G is never unfrozen, so in the G step nothing requires grad and
backward raises "element 0 of tensors does not require grad".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def set_requires_grad(nets, flag):
    for net in nets if isinstance(nets, (list, tuple)) else [nets]:
        for p in net.parameters():
            p.requires_grad = flag


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.PReLU(), nn.Conv2d(8, 12, 3, padding=1), nn.PixelShuffle(2))

    def forward(self, x):
        return torch.tanh(self.net(x))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x)


class SRGANTrainer:
    def __init__(self):
        self.G, self.D = Generator(), Discriminator()
        self.vgg = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU()).eval()
        set_requires_grad(self.vgg, False)
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=1e-4)
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=1e-4)

    def d_step(self, lr, hr):
        set_requires_grad(self.D, True)
        set_requires_grad(self.G, False)  # <-- CUT
        fake = self.G(lr)
        loss_d = F.softplus(-self.D(hr)).mean() + F.softplus(self.D(fake)).mean()
        self.opt_d.zero_grad()
        loss_d.backward()
        self.opt_d.step()

    def g_step(self, lr, hr):
        set_requires_grad(self.D, False)
        sr = self.G(lr)
        loss_g = F.l1_loss(self.vgg(sr), self.vgg(hr)) + 1e-3 * F.softplus(-self.D(sr)).mean()
        self.opt_g.zero_grad()
        loss_g.backward()
        self.opt_g.step()


def run():
    torch.manual_seed(0)
    tr = SRGANTrainer()
    lr, hr = torch.rand(2, 3, 6, 6) * 2 - 1, torch.rand(2, 3, 12, 12) * 2 - 1
    tr.d_step(lr, hr)
    tr.g_step(lr, hr)
    return {"tr": tr}
