"""GAN trainer with G and D held in one wrapper nn.Module. After g_loss.backward() the
user wants to drop the D gradients that the generator pass produced (the forum answer says
zero_grad clears .grad "for every parameter"), and calls gan.zero_grad(), the module's
method, which sets every .grad of both nets to None before g_opt.step() reads G's grads.
Thread: discuss.pytorch.org/t/what-does-the-backward-function-do/9944
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "gan.G.net[0].weight"
EXPECT = "grad_none"


class Generator(nn.Module):
    def __init__(self, z, d):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z, 32), nn.ReLU(), nn.Linear(32, d))

    def forward(self, z):
        return self.net(z)


class GAN(nn.Module):
    def __init__(self, z=8, d=4):
        super().__init__()
        self.G = Generator(z, d)
        self.D = nn.Sequential(nn.Linear(d, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def generate(self, z):
        return self.G(z)


def train_step(gan, g_opt, d_opt, real, z):
    ones, zeros = torch.ones(real.shape[0], 1), torch.zeros(real.shape[0], 1)
    fake = gan.generate(z)
    d_loss = (F.binary_cross_entropy_with_logits(gan.D(real), ones)
              + F.binary_cross_entropy_with_logits(gan.D(fake.detach()), zeros))
    d_opt.zero_grad()
    d_loss.backward()
    d_opt.step()

    g_loss = F.binary_cross_entropy_with_logits(gan.D(fake), ones)
    g_opt.zero_grad()
    g_loss.backward()
    gan.zero_grad()  # <-- CUT
    g_opt.step()
    return d_loss, g_loss


def run():
    torch.manual_seed(0)
    gan = GAN()
    g_opt = torch.optim.Adam(gan.G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    d_opt = torch.optim.Adam(gan.D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real = torch.randn(16, 4) * 0.5 + 1.0
    d_loss, g_loss = train_step(gan, g_opt, d_opt, real, torch.randn(16, 8))
    return {"gan": gan, "d_loss": d_loss, "g_loss": g_loss}
