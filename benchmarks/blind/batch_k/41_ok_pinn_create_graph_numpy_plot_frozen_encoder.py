"""Control: PINN for u'' = -pi^2 sin(pi x) with a frozen pretrained Fourier-feature encoder
(requires_grad_(False) on purpose), derivatives via autograd.grad(create_graph=True), and the
residual copied with .detach().cpu().numpy() for a plot. model.net[0].weight trains normally.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.net[0].weight"
EXPECT = "grad_ok"


class FourierEncoder(nn.Module):
    def __init__(self, n_freq=8):
        super().__init__()
        self.B = nn.Linear(1, n_freq, bias=False)

    def forward(self, x):
        z = self.B(x)
        return torch.cat([torch.sin(z), torch.cos(z)], -1)


class PINN(nn.Module):
    def __init__(self, n_freq=8):
        super().__init__()
        self.enc = FourierEncoder(n_freq)
        self.enc.requires_grad_(False)
        self.net = nn.Sequential(nn.Linear(2 * n_freq, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, x):
        return x * (1 - x) * self.net(self.enc(x))


def run():
    torch.manual_seed(0)
    model = PINN()
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    x = torch.rand(50, 1, requires_grad=True)
    u = model(x)
    u_x = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)[0]
    u_xx = torch.autograd.grad(u_x, x, torch.ones_like(u_x), create_graph=True)[0]
    res = u_xx + torch.pi ** 2 * torch.sin(torch.pi * x)
    loss = res.pow(2).mean()  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    res_np = res.detach().cpu().numpy()
    plot_data = {"x": x.detach().numpy().ravel(), "r": np.abs(res_np).ravel()}
    return {"model": model, "loss": loss.item(), "plot_data": plot_data}
