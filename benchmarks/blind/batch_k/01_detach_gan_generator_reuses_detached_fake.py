"""GAN trainer that samples the fake batch once, detaches it for the D step (correct),
and then reuses the same detached tensor for the generator step to "save a forward".
D and the D optimizer work; the generator loss only reaches D, so G.net[0].weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.G.net[0].weight"
EXPECT = "grad_none"


class Generator(nn.Module):
    def __init__(self, z_dim=16, out_dim=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, out_dim), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, in_dim=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


class GANTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.G, self.D = Generator(cfg["z_dim"]), Discriminator()
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=cfg["lr"], betas=(0.5, 0.999))
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=cfg["lr"], betas=(0.5, 0.999))

    def sample_fake(self, n):
        z = torch.randn(n, self.cfg["z_dim"])
        return self.G(z).detach()  # <-- CUT

    def step(self, real):
        n = real.size(0)
        ones, zeros = torch.ones(n, 1), torch.zeros(n, 1)
        fake = self.sample_fake(n)
        d_loss = (F.binary_cross_entropy_with_logits(self.D(real), ones)
                  + F.binary_cross_entropy_with_logits(self.D(fake), zeros))
        self.opt_d.zero_grad()
        d_loss.backward()
        self.opt_d.step()

        g_loss = F.binary_cross_entropy_with_logits(self.D(fake), ones)
        self.opt_g.zero_grad()
        self.opt_d.zero_grad()
        g_loss.backward()
        self.opt_g.step()
        return d_loss.item(), g_loss.item()


def run():
    torch.manual_seed(0)
    trainer = GANTrainer({"z_dim": 16, "lr": 2e-4})
    real = torch.randn(32, 8).clamp(-1, 1)
    d_l, g_l = trainer.step(real)
    return {"trainer": trainer, "d_l": d_l, "g_l": g_l}
