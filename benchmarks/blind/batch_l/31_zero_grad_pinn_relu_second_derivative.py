"""Heat-equation PINN with a learnable diffusivity, using the thread's diff(y, xs) helper
(autograd.grad with create_graph and allow_unused). The MLP's tanh was swapped for ReLU
"to train faster"; a ReLU network is piecewise linear, so u_xx is exactly zero, the
alpha * u_xx term vanishes and alpha.grad is all zeros while the weights still train.
"""
import torch
import torch.nn as nn

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "pinn.alpha"
EXPECT = "grad_zero"


def diff(y, xs):
    grad = y
    for x in xs:
        g = torch.autograd.grad(grad, x, grad_outputs=torch.ones_like(grad),
                                allow_unused=True, create_graph=True)[0]
        grad = g if g is not None else torch.zeros_like(x)
    return grad


class HeatPINN(nn.Module):
    def __init__(self, h=32):
        super().__init__()
        self.fc1 = nn.Linear(2, h)
        self.fc2 = nn.Linear(h, h)
        self.fc3 = nn.Linear(h, 1)
        self.alpha = nn.Parameter(torch.tensor(0.5))

    def forward(self, x, t):
        h = torch.relu(self.fc1(torch.cat([x, t], dim=1)))  # <-- CUT
        h = torch.relu(self.fc2(h))
        return self.fc3(h)

    def residual(self, x, t):
        u = self(x, t)
        return diff(u, [t]) - self.alpha * diff(u, [x, x])


def run():
    torch.manual_seed(0)
    pinn = HeatPINN()
    opt = torch.optim.Adam(pinn.parameters(), lr=1e-3)
    x = torch.rand(64, 1, requires_grad=True)
    t = torch.rand(64, 1, requires_grad=True)
    x0 = torch.rand(16, 1)
    u0 = torch.sin(3.14159 * x0)
    loss_pde = pinn.residual(x, t).pow(2).mean()
    loss_ic = (pinn(x0, torch.zeros_like(x0)) - u0).pow(2).mean()
    loss = loss_pde + loss_ic
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"pinn": pinn, "loss": loss}
