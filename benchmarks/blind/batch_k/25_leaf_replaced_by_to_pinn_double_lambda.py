"""Inverse PINN run in float64 (common for PINNs) that identifies the diffusion coefficient.
The unknown is created with requires_grad=True and then converted with .double() to match the
network, which makes a non-leaf copy; the hand-written update skips a None grad, and lam.grad is None.
"""
import torch
import torch.nn as nn

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "lam"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(2, 20), nn.Tanh(), nn.Linear(20, 20), nn.Tanh(), nn.Linear(20, 1))

    def forward(self, X):
        return self.f(X)


def derivatives(u, X):
    g = torch.autograd.grad(u, X, torch.ones_like(u), create_graph=True)[0]
    u_x, u_t = g[:, :1], g[:, 1:]
    u_xx = torch.autograd.grad(u_x, X, torch.ones_like(u_x), create_graph=True)[0][:, :1]
    return u_t, u_xx


def run():
    torch.manual_seed(0)
    cfg = {"dtype": torch.float64, "lr": 1e-3}
    net = Net().to(cfg["dtype"])
    lam = torch.tensor([0.5], requires_grad=True)
    lam = lam.double()  # <-- CUT
    opt = torch.optim.Adam(net.parameters(), lr=cfg["lr"])
    X = torch.rand(64, 2, dtype=cfg["dtype"], requires_grad=True)
    X_obs = torch.rand(16, 2, dtype=cfg["dtype"])
    u_obs = torch.sin(torch.pi * X_obs[:, :1]) * torch.exp(-X_obs[:, 1:])
    u = net(X)
    u_t, u_xx = derivatives(u, X)
    loss = (u_t - lam * u_xx).pow(2).mean() + (net(X_obs) - u_obs).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        if lam.grad is not None:
            lam -= 10 * cfg["lr"] * lam.grad
    return {"net": net, "lam": lam, "opt": opt, "loss": loss}
