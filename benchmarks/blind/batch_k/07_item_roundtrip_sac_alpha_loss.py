"""Soft actor-critic with automatic entropy tuning. The actor loss uses alpha as a constant
(correct: alpha = log_alpha.exp().item()), but the temperature loss reuses that same float,
so log_alpha never enters a graph and agent.log_alpha.grad stays None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.log_alpha"
EXPECT = "grad_none"


class GaussianActor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU())
        self.mu, self.log_std = nn.Linear(64, act_dim), nn.Linear(64, act_dim)

    def forward(self, s):
        h = self.body(s)
        std = self.log_std(h).clamp(-5, 2).exp()
        dist = torch.distributions.Normal(self.mu(h), std)
        u = dist.rsample()
        a = torch.tanh(u)
        logp = (dist.log_prob(u) - torch.log(1 - a.pow(2) + 1e-6)).sum(-1)
        return a, logp


class QNet(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.q = nn.Sequential(nn.Linear(obs_dim + act_dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, s, a):
        return self.q(torch.cat([s, a], -1)).squeeze(-1)


class SACAgent:
    def __init__(self, obs_dim=5, act_dim=2):
        self.actor, self.q1 = GaussianActor(obs_dim, act_dim), QNet(obs_dim, act_dim)
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.target_entropy = -float(act_dim)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=3e-4)

    def update_actor_and_alpha(self, s):
        alpha = self.log_alpha.exp().item()  # <-- CUT
        a, logp = self.actor(s)
        actor_loss = (alpha * logp - self.q1(s, a)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()

        alpha_loss = -(alpha * (logp.detach() + self.target_entropy)).mean()
        self.alpha_opt.zero_grad()
        if alpha_loss.requires_grad:
            alpha_loss.backward()
        self.alpha_opt.step()
        return actor_loss.item(), float(alpha_loss)


def run():
    torch.manual_seed(0)
    agent = SACAgent()
    losses = agent.update_actor_and_alpha(torch.randn(32, 5))
    return {"agent": agent, "losses": losses}
