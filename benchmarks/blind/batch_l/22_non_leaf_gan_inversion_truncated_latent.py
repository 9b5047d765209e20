"""GAN inversion: optimise a latent code so a frozen generator reproduces a target.
The code is created with requires_grad_() and then truncated with .clamp(-t, t)
("truncation trick") on the same line, so self.z is a non-leaf. The manual update
checks `if self.z.grad is not None`, finds None, and z never moves.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "inv.z"
EXPECT = "grad_none"


class Generator(nn.Module):
    def __init__(self, nz=8, d=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(nz, 64), nn.ReLU(), nn.Linear(64, d), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class LatentInverter:
    def __init__(self, G, nz=8, trunc=2.0, lr=0.05):
        self.G = G.eval().requires_grad_(False)
        self.z = torch.randn(1, nz).requires_grad_().clamp(-trunc, trunc)  # <-- CUT
        self.lr = lr

    def step(self, target):
        recon = self.G(self.z)
        loss = F.mse_loss(recon, target) + 1e-3 * self.z.pow(2).sum()
        loss.backward()
        with torch.no_grad():
            if self.z.grad is not None:
                self.z -= self.lr * self.z.grad
                self.z.grad.zero_()
        return loss


def run():
    torch.manual_seed(0)
    G = Generator()
    target = G(torch.randn(1, 8)).detach()
    inv = LatentInverter(G)
    losses = [inv.step(target).item()]
    return {"inv": inv, "G": G, "losses": losses}
