"""WGAN-GP critic using a custom leaky activation written as an
autograd.Function with `@once_differentiable` on its backward (from an older
repo). The gradient penalty needs a double backward through it
(`create_graph=True`), so d_loss.backward() raises.
"""
import torch
import torch.nn as nn
from torch.autograd.function import once_differentiable

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "critic.fc1.weight"
EXPECT = "backward_error"


class FastLeaky(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.where(x > 0, x, 0.2 * x)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.where(x > 0, 1.0, 0.2)  # <-- CUT


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, x):
        return self.fc2(FastLeaky.apply(self.fc1(x)))


def run():
    torch.manual_seed(0)
    critic = Critic()
    opt = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))
    real, fake = torch.randn(16, 8), torch.randn(16, 8)
    eps = torch.rand(16, 1)
    interp = (eps * real + (1 - eps) * fake).requires_grad_(True)
    g = torch.autograd.grad(critic(interp).sum(), interp, create_graph=True)[0]
    gp = ((g.norm(2, dim=1) - 1) ** 2).mean()
    d_loss = critic(fake).mean() - critic(real).mean() + 10.0 * gp
    opt.zero_grad()
    d_loss.backward()
    opt.step()
    return {"critic": critic, "opt": opt, "d_loss": d_loss}
