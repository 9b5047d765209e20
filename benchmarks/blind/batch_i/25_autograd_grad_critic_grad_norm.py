"""WGAN-GP critic step. The gradient penalty correctly uses
torch.autograd.grad(create_graph=True) on the interpolates, but the user also
replaced critic_loss.backward() with torch.autograd.grad(critic_loss, params) to
log the gradient norm, then called opt.step(): D.net[0].weight.grad is None.
Thread: SO 69148622 "Difference between autograd.grad and autograd.backward?".
"""
import torch
import torch.nn as nn

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "D.net[0].weight"
EXPECT = "grad_none"


class Critic(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


def gradient_penalty(D, real, fake):
    eps = torch.rand(real.size(0), 1)
    mix = (eps * real + (1 - eps) * fake).requires_grad_(True)
    g, = torch.autograd.grad(D(mix).sum(), mix, create_graph=True)
    return ((g.norm(2, dim=1) - 1) ** 2).mean()


def critic_step(D, opt, real, fake, lam=10.0):
    loss = D(fake).mean() - D(real).mean() + lam * gradient_penalty(D, real, fake)
    opt.zero_grad()
    grads = torch.autograd.grad(loss, list(D.parameters()))  # <-- CUT
    grad_norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
    opt.step()
    return loss, grad_norm


def run():
    torch.manual_seed(0)
    D = Critic()
    G = nn.Linear(4, 8)
    opt = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.0, 0.9))
    real = torch.randn(16, 8)
    with torch.no_grad():
        fake = G(torch.randn(16, 4))
    loss, grad_norm = critic_step(D, opt, real, fake)
    return {"D": D, "G": G, "opt": opt, "loss": loss, "grad_norm": grad_norm}
