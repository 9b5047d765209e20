"""WGAN-GP trainer: the gradient-penalty weight is a learnable scalar but the trainer logs and
reuses float(self.gp_weight), so it never gets a grad while the critic trains.
Thread: WGAN-GP learnable penalty weight (reconstructed; Zeleni9/pytorch-wgan#20 shape)."""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.gp_weight"
EXPECT = "grad_none"


class Trainer:
    def __init__(self):
        self.critic = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        self.gp_weight = nn.Parameter(torch.tensor(10.0))

    def gradient_penalty(self, real, fake):
        alpha = torch.rand(real.size(0), 1)
        x = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        g = torch.autograd.grad(self.critic(x).sum(), x, create_graph=True)[0]
        return ((g.norm(dim=1) - 1) ** 2).mean()

    def critic_step(self, real, fake):
        lam = float(self.gp_weight)  # <-- CUT
        loss = self.critic(fake).mean() - self.critic(real).mean() + lam * self.gradient_penalty(real, fake)
        loss.backward()
        return loss


def run():
    torch.manual_seed(0)
    trainer = Trainer()
    G = nn.Linear(2, 4)
    with torch.no_grad():
        fake = G(torch.randn(6, 2))
    trainer.critic_step(torch.randn(6, 4), fake)
    return {"trainer": trainer}
