"""SAC: alpha = log_alpha.exp().item() for the actor loss is fine, but the temperature loss was
written with .item() too, so log_alpha never gets a gradient and alpha stays at 1.
Thread: SAC automatic entropy tuning alpha constant (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "item_roundtrip"
QUERY = 'agent.log_alpha'
EXPECT = "grad_none"

class Agent:
    def __init__(self):
        self.actor = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2))
        self.critic = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.opt = torch.optim.Adam(list(self.actor.parameters()) + [self.log_alpha], 3e-4)
    def sample(self, s):
        mu, log_std = self.actor(s).chunk(2, -1)
        std = log_std.clamp(-5, 2).exp()
        u = mu + std * torch.randn_like(mu)
        logp = (-0.5 * ((u - mu) / std) ** 2 - log_std.clamp(-5, 2)).sum(-1) - torch.log(1 - torch.tanh(u).pow(2) + 1e-6).sum(-1)
        return torch.tanh(u), logp
    def update(self, s):
        a, logp = self.sample(s)
        alpha = self.log_alpha.exp().item()
        actor_loss = (alpha * logp - self.critic(torch.cat([s, a], -1)).squeeze(-1)).mean()
        alpha_loss = -(self.log_alpha.exp().item() * (logp.detach() - 1.0)).mean()  # <-- CUT
        self.opt.zero_grad(); (actor_loss + alpha_loss).backward(); self.opt.step()

def run():
    torch.manual_seed(0)
    agent = Agent()
    agent.update(torch.randn(16, 3))
    return {"agent": agent}
