"""Inverse PINN for Burgers' equation with a learnable viscosity log_nu. The
residual is built in a closure, and nu is taken as `float(self.log_nu.exp())`
to "keep it a scalar". The network trains, but log_nu.grad stays None, so the
viscosity is never identified.
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "pinn.log_nu"
EXPECT = "grad_none"


class BurgersPINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.u = nn.Sequential(nn.Linear(2, 20), nn.Tanh(), nn.Linear(20, 20), nn.Tanh(), nn.Linear(20, 1))
        self.log_nu = nn.Parameter(torch.tensor(-2.0))

    def residual_fn(self):
        nu = float(self.log_nu.exp())  # <-- CUT

        def residual(tx):
            u = self.u(tx)
            du = torch.autograd.grad(u.sum(), tx, create_graph=True)[0]
            u_t, u_x = du[:, :1], du[:, 1:]
            u_xx = torch.autograd.grad(u_x.sum(), tx, create_graph=True)[0][:, 1:]
            return u_t + u * u_x - nu * u_xx

        return residual


def run():
    torch.manual_seed(0)
    pinn = BurgersPINN()
    opt = torch.optim.Adam(pinn.parameters(), lr=1e-3)
    tx = torch.rand(64, 2, requires_grad=True)
    tx_obs = torch.rand(16, 2)
    u_obs = torch.sin(3.0 * tx_obs[:, 1:]) * torch.exp(-tx_obs[:, :1])
    residual = pinn.residual_fn()
    loss = residual(tx).pow(2).mean() + (pinn.u(tx_obs) - u_obs).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"pinn": pinn, "opt": opt, "loss": loss, "tx": tx}
