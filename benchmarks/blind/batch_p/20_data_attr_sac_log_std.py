"""SAC actor with a state-independent log_std parameter. forward() clamps it via
self.log_std.data so the clamp "does not interfere with autograd", which cuts it
out of the graph: log_std never learns. Next to it, the Polyak update of the
target critic through .data is a correct, deliberate use.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "actor.log_std"
EXPECT = "grad_none"


class Actor(nn.Module):
    def __init__(self, s=4, a=2):
        super().__init__()
        self.mu = nn.Sequential(nn.Linear(s, 32), nn.ReLU(), nn.Linear(32, a))
        self.log_std = nn.Parameter(torch.zeros(a))

    def forward(self, s):
        mu = self.mu(s)
        log_std = self.log_std.data.clamp(-20, 2)  # <-- CUT
        std = log_std.exp().expand_as(mu)
        u = mu + std * torch.randn_like(mu)
        a = torch.tanh(u)
        logp = (-0.5 * ((u - mu) / std) ** 2 - log_std).sum(-1) - torch.log(1 - a.pow(2) + 1e-6).sum(-1)
        return a, logp


def polyak(target, online, tau=0.005):
    for tp, p in zip(target.parameters(), online.parameters()):
        tp.data.mul_(1 - tau).add_(tau * p.data)


def run():
    torch.manual_seed(0)
    actor = Actor()
    critic = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))
    critic_t = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))
    critic_t.load_state_dict(critic.state_dict())
    pi_opt = torch.optim.Adam(actor.parameters(), lr=3e-4)
    s = torch.randn(32, 4)
    a, logp = actor(s)
    q = critic(torch.cat([s, a], -1)).squeeze(-1)
    pi_loss = (0.2 * logp - q).mean()
    pi_opt.zero_grad()
    pi_loss.backward()
    pi_opt.step()
    polyak(critic_t, critic)
    return {"actor": actor, "critic": critic, "pi_loss": pi_loss}
