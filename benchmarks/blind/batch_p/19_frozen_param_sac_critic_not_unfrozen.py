"""SAC agent that freezes the Q-networks during the policy update (as Spinning Up
does), but the unfreeze loop was lost in a refactor. On the next update the critic
loss only involves frozen Q-nets, buffer actions and a no_grad target, so
critic_loss.backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def mlp(i, o):
    return nn.Sequential(nn.Linear(i, 32), nn.ReLU(), nn.Linear(32, o))


class GaussianActor(nn.Module):
    def __init__(self, s, a):
        super().__init__()
        self.body, self.mu, self.log_std = mlp(s, 32), nn.Linear(32, a), nn.Linear(32, a)

    def sample(self, s):
        h = F.relu(self.body(s))
        mu, std = self.mu(h), self.log_std(h).clamp(-5, 2).exp()
        u = mu + std * torch.randn_like(mu)
        a = torch.tanh(u)
        logp = (-0.5 * ((u - mu) / std) ** 2 - std.log()).sum(-1) - torch.log(1 - a.pow(2) + 1e-6).sum(-1)
        return a, logp


class SACAgent:
    def __init__(self, s=5, a=2, alpha=0.2, gamma=0.99):
        self.actor = GaussianActor(s, a)
        self.q1, self.q2 = mlp(s + a, 1), mlp(s + a, 1)
        self.q1_t, self.q2_t = mlp(s + a, 1), mlp(s + a, 1)
        self.q1_t.load_state_dict(self.q1.state_dict())
        self.q2_t.load_state_dict(self.q2.state_dict())
        self.q_params = list(self.q1.parameters()) + list(self.q2.parameters())
        self.q_opt = torch.optim.Adam(self.q_params, lr=3e-4)
        self.pi_opt = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.alpha, self.gamma = alpha, gamma

    def update(self, s, a, r, s2, d):
        with torch.no_grad():
            a2, logp2 = self.actor.sample(s2)
            sa2 = torch.cat([s2, a2], -1)
            y = r + self.gamma * (1 - d) * (torch.min(self.q1_t(sa2), self.q2_t(sa2)).squeeze(-1) - self.alpha * logp2)
        sa = torch.cat([s, a], -1)
        q_loss = F.mse_loss(self.q1(sa).squeeze(-1), y) + F.mse_loss(self.q2(sa).squeeze(-1), y)
        self.q_opt.zero_grad()
        q_loss.backward()
        self.q_opt.step()
        for p in self.q_params:
            p.requires_grad = False  # <-- CUT
        a_pi, logp = self.actor.sample(s)
        sa_pi = torch.cat([s, a_pi], -1)
        pi_loss = (self.alpha * logp - torch.min(self.q1(sa_pi), self.q2(sa_pi)).squeeze(-1)).mean()
        self.pi_opt.zero_grad()
        pi_loss.backward()
        self.pi_opt.step()
        return q_loss.item(), pi_loss.item()


def run():
    torch.manual_seed(0)
    agent = SACAgent()
    for _ in range(2):
        s, a, r, s2 = torch.randn(16, 5), torch.rand(16, 2) * 2 - 1, torch.randn(16), torch.randn(16, 5)
        agent.update(s, a, r, s2, torch.zeros(16))
    return {"agent": agent}
