"""WGAN-GP critic step run under anomaly detection. The critic clamps its input to
the data range [-1, 1]; an outlier in the real batch leaves the interpolate outside
it, so that row's input gradient is exactly zero and the hand-written norm
`sqrt(sum(g**2))` has an infinite derivative there: backward reports nan values.
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Critic(nn.Module):
    def __init__(self, dim=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(torch.clamp(x, -1.0, 1.0))


class Generator(nn.Module):
    def __init__(self, z_dim=4, dim=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, dim), nn.Tanh())

    def forward(self, z):
        return self.net(z)


def gradient_penalty(D, real, fake):
    eps = torch.rand(real.size(0), 1)
    x_hat = (eps * real + (1 - eps) * fake).requires_grad_(True)
    g = torch.autograd.grad(D(x_hat).sum(), x_hat, create_graph=True)[0]
    g_norm = torch.sqrt((g ** 2).sum(dim=1))  # <-- CUT
    return ((g_norm - 1) ** 2).mean()


def run():
    torch.manual_seed(0)
    G, D = Generator(), Critic()
    d_opt = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.0, 0.9))
    real = torch.rand(16, 2) * 2 - 1
    real[0] = torch.tensor([9.0, 9.0])
    with torch.autograd.detect_anomaly():
        fake = G(torch.randn(16, 4)).detach()
        d_loss = D(fake).mean() - D(real).mean() + 10.0 * gradient_penalty(D, real, fake)
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()
    return {"G": G, "D": D, "d_loss": d_loss}
