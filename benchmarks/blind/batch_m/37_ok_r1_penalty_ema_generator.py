"""Control: StyleGAN-style step. The D step uses a detached fake and an R1 penalty
from autograd.grad(create_graph=True) on real images; D is frozen with
requires_grad_(False) only during the G step; a generator EMA copy is updated
through `.data` under no_grad. The generator's own weight gets a nonzero gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "G[0].weight"
EXPECT = "grad_ok"


def mlp(i, o, act):
    return nn.Sequential(nn.Linear(i, 64), act, nn.Linear(64, o))


class Trainer:
    def __init__(self, z_dim=8, x_dim=16, r1_gamma=10.0, ema_beta=0.999):
        self.G, self.D = mlp(z_dim, x_dim, nn.ReLU()), mlp(x_dim, 1, nn.LeakyReLU(0.2))
        self.G_ema = mlp(z_dim, x_dim, nn.ReLU())
        self.G_ema.load_state_dict(self.G.state_dict())
        self.G_ema.requires_grad_(False)
        self.g_opt = torch.optim.Adam(self.G.parameters(), lr=2e-4, betas=(0.0, 0.99))
        self.d_opt = torch.optim.Adam(self.D.parameters(), lr=2e-4, betas=(0.0, 0.99))
        self.z_dim, self.r1_gamma, self.ema_beta = z_dim, r1_gamma, ema_beta

    def d_step(self, real):
        real = real.detach().requires_grad_(True)
        d_real = self.D(real)
        grad_real, = torch.autograd.grad(d_real.sum(), real, create_graph=True)
        r1 = grad_real.pow(2).sum(1).mean()
        fake = self.G(torch.randn(real.size(0), self.z_dim)).detach()
        loss = F.softplus(self.D(fake)).mean() + F.softplus(-d_real).mean() + 0.5 * self.r1_gamma * r1
        self.d_opt.zero_grad()
        loss.backward()
        self.d_opt.step()
        return loss.item()

    def g_step(self, batch):
        self.D.requires_grad_(False)
        fake = self.G(torch.randn(batch, self.z_dim))
        loss = F.softplus(-self.D(fake)).mean()  # <-- CUT
        self.g_opt.zero_grad()
        loss.backward()
        self.g_opt.step()
        self.D.requires_grad_(True)
        with torch.no_grad():
            for p_ema, p in zip(self.G_ema.parameters(), self.G.parameters()):
                p_ema.data.mul_(self.ema_beta).add_(p.data, alpha=1 - self.ema_beta)
        return loss.item()


def run():
    torch.manual_seed(0)
    tr = Trainer()
    logs = (tr.d_step(torch.randn(16, 16)), tr.g_step(16))
    return {"trainer": tr, "G": tr.G, "D": tr.D, "logs": logs}
