"""WGAN-GP critic step written after the forum thread on computing the gradient penalty
with torch.autograd.grad(..., create_graph=True). The user then also used autograd.grad
for the critic loss itself (to log per-parameter norms) instead of backward(), so the
critic's .grad fields are never filled and critic_opt.step() does nothing.
Thread: discuss.pytorch.org "Calculating the Gradients for WGAN-GP" (Israrbacha, Feb 2021)
"""
import torch
import torch.nn as nn

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "critic.net[0].weight"
EXPECT = "grad_none"


class Critic(nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.shape[0], 1)
    interpolated = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    prob_interpolated = critic(interpolated)
    gradients = torch.autograd.grad(outputs=prob_interpolated, inputs=interpolated,
                                    grad_outputs=torch.ones(prob_interpolated.size()),
                                    create_graph=True, retain_graph=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


class WGANTrainer:
    def __init__(self, G, critic, gp_weight=10.0):
        self.G, self.critic, self.gp_weight = G, critic, gp_weight
        self.critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.5, 0.9))
        self.grad_norms = {}

    def critic_step(self, real, z):
        with torch.no_grad():
            fake = self.G(z)
        loss = self.critic(fake).mean() - self.critic(real).mean()
        loss = loss + self.gp_weight * gradient_penalty(self.critic, real, fake)
        self.critic_opt.zero_grad()
        params = list(self.critic.parameters())
        grads = torch.autograd.grad(loss, params)  # <-- CUT
        self.grad_norms = {i: g.norm().item() for i, g in enumerate(grads)}
        self.critic_opt.step()
        return loss


def run():
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    critic = Critic()
    trainer = WGANTrainer(G, critic)
    real = torch.randn(16, 4) + 2.0
    loss = trainer.critic_step(real, torch.randn(16, 8))
    return {"critic": critic, "G": G, "trainer": trainer, "loss": loss}
