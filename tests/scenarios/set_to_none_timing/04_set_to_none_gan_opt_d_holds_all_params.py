"""GAN step that computes both losses and steps both optimizers at the end. The
discriminator optimizer was built from `gan.parameters()` (the whole wrapper)
instead of `gan.D.parameters()`, so `opt_d.zero_grad()` before the D backward
also sets the generator's fresh gradients to None; opt_g.step() does nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "gan.G.net[0].weight"
EXPECT = "grad_none"


class G(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 8))

    def forward(self, z):
        return self.net(z)


class D(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


class GAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.G, self.D = G(), D()


def run():
    torch.manual_seed(0)
    gan = GAN()
    opt_g = torch.optim.Adam(gan.G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(gan.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real, z = torch.randn(16, 8), torch.randn(16, 4)
    fake = gan.G(z)
    pred_fake = gan.D(fake)
    g_loss = F.binary_cross_entropy_with_logits(pred_fake, torch.ones_like(pred_fake))
    opt_g.zero_grad()
    g_loss.backward()
    pr, pf = gan.D(real), gan.D(fake.detach())
    d_loss = (F.binary_cross_entropy_with_logits(pr, torch.ones_like(pr))
              + F.binary_cross_entropy_with_logits(pf, torch.zeros_like(pf)))
    opt_d.zero_grad()  # <-- CUT
    d_loss.backward()
    opt_g.step()
    opt_d.step()
    return {"gan": gan, "opt_g": opt_g, "opt_d": opt_d, "g_loss": g_loss, "d_loss": d_loss}
