"""Control: WGAN-GP critic step. The gradient penalty uses torch.autograd.grad
with create_graph=True on interpolated samples, and the critic loss is then
backpropagated with loss.backward(); the critic's gradient is non-zero.
"""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "D[0].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    D = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    real, fake = torch.randn(8, 4), torch.randn(8, 4)
    eps = torch.rand(8, 1)
    interp = (eps * real + (1 - eps) * fake).requires_grad_(True)
    grads = torch.autograd.grad(D(interp).sum(), interp, create_graph=True)[0]
    gp = ((grads.norm(2, dim=1) - 1) ** 2).mean()
    loss = D(fake).mean() - D(real).mean() + 10 * gp  # <-- CUT
    loss.backward()
    return {"D": D, "loss": loss}
