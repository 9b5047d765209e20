"""Control: WGAN-GP generator step after a critic step. The critic step uses G(z).detach()
and a gradient penalty from autograd.grad(create_graph=True); the critic is frozen with
requires_grad_(False) only for the G step and unfrozen after. G.net[0].weight gets a real gradient.
"""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "G.net[0].weight"
EXPECT = "grad_ok"


def mlp(i, o, h=32):
    return nn.Sequential(nn.Linear(i, h), nn.LeakyReLU(0.2), nn.Linear(h, o))


class Gen(nn.Module):
    def __init__(self, z=8, out=6):
        super().__init__()
        self.net = mlp(z, out)

    def forward(self, z):
        return self.net(z)


def gradient_penalty(C, real, fake):
    eps = torch.rand(real.size(0), 1)
    xh = (eps * real + (1 - eps) * fake).requires_grad_(True)
    g = torch.autograd.grad(C(xh).sum(), xh, create_graph=True)[0]
    return ((g.norm(2, dim=1) - 1) ** 2).mean()


def run():
    torch.manual_seed(0)
    G, C = Gen(), mlp(6, 1)
    opt_g = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.0, 0.9))
    opt_c = torch.optim.Adam(C.parameters(), lr=1e-4, betas=(0.0, 0.9))
    real = torch.randn(32, 6) + 1.0
    log = {}

    fake = G(torch.randn(32, 8)).detach()
    c_loss = C(fake).mean() - C(real).mean() + 10.0 * gradient_penalty(C, real, fake)
    opt_c.zero_grad()
    c_loss.backward()
    opt_c.step()
    log["c_loss"] = c_loss.item()

    C.requires_grad_(False)
    g_loss = -C(G(torch.randn(32, 8))).mean()  # <-- CUT
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    C.requires_grad_(True)
    log["g_loss"] = g_loss.item()
    return {"G": G, "C": C, "log": log}
