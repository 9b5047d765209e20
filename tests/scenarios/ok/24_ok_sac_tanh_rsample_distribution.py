"""Control: SAC-style actor update. Actions come from `Normal(mu, std).rsample()`
squashed with tanh, log-prob corrected for the tanh; the critic is frozen via
`requires_grad_(False)` for the actor step. The actor trains.
"""
import torch
import torch.nn as nn
from torch.distributions import Normal

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "actor.mu.weight"
EXPECT = "grad_ok"


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 32), nn.ReLU())
        self.mu, self.log_std = nn.Linear(32, 2), nn.Linear(32, 2)

    def forward(self, s):
        h = self.body(s)
        return self.mu(h), self.log_std(h).clamp(-5, 2).exp()


def run():
    torch.manual_seed(0)
    actor = Actor()
    critic = nn.Sequential(nn.Linear(7, 32), nn.ReLU(), nn.Linear(32, 1))
    critic.requires_grad_(False)
    opt = torch.optim.Adam(actor.parameters(), lr=3e-4)
    s = torch.randn(16, 5)
    mu, std = actor(s)
    dist = Normal(mu, std)
    u = dist.rsample()
    a = torch.tanh(u)
    logp = (dist.log_prob(u) - torch.log(1 - a.pow(2) + 1e-6)).sum(-1)
    loss = (0.2 * logp - critic(torch.cat([s, a], -1)).squeeze(-1)).mean()  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"actor": actor, "critic": critic, "opt": opt, "loss": loss}
