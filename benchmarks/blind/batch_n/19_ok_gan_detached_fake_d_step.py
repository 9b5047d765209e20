"""Control: WGAN-GP critic step with a detached fake, a correct autograd.grad penalty with
create_graph=True, and .item() logging; the critic's first layer has a nonzero grad.
Thread: Zeleni9/pytorch-wgan#20 critic step shape (adapted)."""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "critic[0].weight"
EXPECT = "grad_ok"


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    x = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    g = torch.autograd.grad(critic(x).sum(), x, create_graph=True)[0]
    return ((g.norm(2, dim=1) - 1) ** 2).mean()


def run():
    torch.manual_seed(0)
    gen = nn.Linear(3, 4)
    critic = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    real = torch.randn(6, 4)
    fake = gen(torch.randn(6, 3))
    loss_c = critic(fake.detach()).mean() - critic(real).mean() + 10 * gradient_penalty(critic, real, fake.detach())  # <-- CUT
    critic.zero_grad()
    loss_c.backward()
    hist = [loss_c.item()]
    return {"critic": critic, "gen": gen, "hist": hist}
