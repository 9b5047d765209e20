"""Inverse-problem PINN for the 1D heat equation u_t = k u_xx with an unknown k. The
log-diffusivity is a plain torch.zeros(1) stored on the trainer and handed to Adam next
to the network's parameters. Data and PDE losses train the network; log_k never gets a
gradient, and Adam silently skips it.
"""
import torch
import torch.nn as nn

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.log_k"
EXPECT = "grad_none"


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, x, t):
        return self.net(torch.cat([x, t], dim=1))


def d(out, inp):
    return torch.autograd.grad(out, inp, torch.ones_like(out), create_graph=True)[0]


class InversePINN:
    def __init__(self):
        self.u = MLP()
        self.log_k = torch.zeros(1)  # <-- CUT
        self.opt = torch.optim.Adam(list(self.u.parameters()) + [self.log_k], lr=1e-3)

    def pde_residual(self, x, t):
        u = self.u(x, t)
        u_t, u_x = d(u, t), d(u, x)
        u_xx = d(u_x, x)
        return u_t - self.log_k.exp() * u_xx

    def step(self, x_d, t_d, u_d, x_c, t_c):
        data = (self.u(x_d, t_d) - u_d).pow(2).mean()
        phys = self.pde_residual(x_c, t_c).pow(2).mean()
        loss = data + phys
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    trainer = InversePINN()
    x_d, t_d = torch.rand(20, 1), torch.rand(20, 1)
    u_d = torch.exp(-0.3 * t_d) * torch.sin(3.14159 * x_d)
    x_c = torch.rand(50, 1, requires_grad=True)
    t_c = torch.rand(50, 1, requires_grad=True)
    loss = trainer.step(x_d, t_d, u_d, x_c, t_c)
    return {"trainer": trainer, "loss": loss}
