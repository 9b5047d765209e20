"""Conditional GAN with a projection discriminator: D(x, y) adds <embed(y), phi(x)> when y is
given. The training loop's D call forgot to pass the labels, so the projection branch is
skipped (return without it) and D.embed.weight.grad is None, while the rest of D trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "D.embed.weight"
EXPECT = "grad_none"


class CondGenerator(nn.Module):
    def __init__(self, z_dim=12, n_cls=4, out=10):
        super().__init__()
        self.lab = nn.Embedding(n_cls, z_dim)
        self.net = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, out))

    def forward(self, z, y):
        return self.net(z * self.lab(y))


class ProjectionD(nn.Module):
    def __init__(self, in_dim=10, n_cls=4, h=32):
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(in_dim, h), nn.LeakyReLU(0.2))
        self.psi = nn.Linear(h, 1)
        self.embed = nn.Embedding(n_cls, h)

    def forward(self, x, y=None):
        h = self.phi(x)
        out = self.psi(h)
        if y is None:
            return out  # <-- CUT
        return out + (self.embed(y) * h).sum(1, keepdim=True)


def d_step(G, D, opt_d, real, y_real, z_dim=12):
    y_fake = torch.randint(0, 4, (real.size(0),))
    fake = G(torch.randn(real.size(0), z_dim), y_fake).detach()
    loss = F.relu(1 - D(real)).mean() + F.relu(1 + D(fake)).mean()
    opt_d.zero_grad()
    loss.backward()
    opt_d.step()
    return loss.item()


def run():
    torch.manual_seed(0)
    G, D = CondGenerator(), ProjectionD()
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.0, 0.9))
    real, y_real = torch.randn(32, 10), torch.randint(0, 4, (32,))
    loss = d_step(G, D, opt_d, real, y_real)
    return {"G": G, "D": D, "loss": loss}
