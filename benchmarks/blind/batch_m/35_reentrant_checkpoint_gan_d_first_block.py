"""GAN with activation checkpointing on the discriminator's first conv block
(use_reentrant=True). In the D step the real images do not require grad and the
fake is correctly detached, so no input of the checkpoint requires grad and block1
gets no gradient; in the G step D is frozen on purpose, so block1 never trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "D.block1[0].weight"
EXPECT = "grad_none"


class Discriminator(nn.Module):
    def __init__(self, use_ckpt=True):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(1, 8, 3, 2, 1), nn.LeakyReLU(0.2))
        self.block2 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.LeakyReLU(0.2))
        self.head = nn.Linear(16 * 2 * 2, 1)
        self.use_ckpt = use_ckpt

    def forward(self, x):
        if self.use_ckpt and self.training:
            h = checkpoint(self.block1, x, use_reentrant=True)  # <-- CUT
        else:
            h = self.block1(x)
        return self.head(self.block2(h).flatten(1))


class Generator(nn.Module):
    def __init__(self, z_dim=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 64), nn.ReLU(), nn.Linear(64, 64), nn.Tanh())

    def forward(self, z):
        return self.net(z).view(-1, 1, 8, 8)


def run():
    torch.manual_seed(0)
    G, D = Generator(), Discriminator()
    g_opt = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    d_opt = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real = torch.rand(4, 1, 8, 8) * 2 - 1
    fake = G(torch.randn(4, 8))
    d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake.detach())).mean()
    d_opt.zero_grad()
    d_loss.backward()
    d_opt.step()
    D.requires_grad_(False)
    g_loss = F.softplus(-D(fake)).mean()
    g_opt.zero_grad()
    g_loss.backward()
    g_opt.step()
    D.requires_grad_(True)
    return {"G": G, "D": D, "d_loss": d_loss, "g_loss": g_loss}
