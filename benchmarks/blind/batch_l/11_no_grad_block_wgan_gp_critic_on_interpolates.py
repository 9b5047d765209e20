"""WGAN-GP critic step. Building the random interpolates under torch.no_grad() and then
calling requires_grad_() is fine, but the critic's score on the interpolates was put in
the same block. torch.autograd.grad for the gradient penalty then has no graph to walk
and raises "element 0 of tensors does not require grad" inside the engine.
"""
import torch
import torch.nn as nn

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Generator(nn.Module):
    def __init__(self, nz=8, d=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(), nn.Linear(32, d))

    def forward(self, z):
        return self.net(z)


class Critic(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


class WGANGPTrainer:
    def __init__(self, G, D, lam=10.0):
        self.G, self.D, self.lam = G, D, lam
        self.d_opt = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.0, 0.9))

    def gradient_penalty(self, real, fake):
        with torch.no_grad():
            alpha = torch.rand(real.size(0), 1)
            interp = alpha * real + (1 - alpha) * fake
            interp.requires_grad_(True)
            d_interp = self.D(interp)  # <-- CUT
        grads = torch.autograd.grad(d_interp, interp, grad_outputs=torch.ones_like(d_interp),
                                    create_graph=True)[0]
        return ((grads.norm(2, dim=1) - 1) ** 2).mean()

    def critic_step(self, real, z):
        fake = self.G(z).detach()
        d_loss = self.D(fake).mean() - self.D(real).mean()
        gp = self.gradient_penalty(real, fake)
        loss = d_loss + self.lam * gp
        self.d_opt.zero_grad()
        loss.backward()
        self.d_opt.step()
        return loss


def run():
    torch.manual_seed(0)
    trainer = WGANGPTrainer(Generator(), Critic())
    real = torch.randn(16, 16)
    z = torch.randn(16, 8)
    loss = trainer.critic_step(real, z)
    return {"trainer": trainer, "loss": loss}
