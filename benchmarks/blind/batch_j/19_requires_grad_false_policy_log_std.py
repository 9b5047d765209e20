"""Gaussian policy for continuous control (PPO/REINFORCE style). The state-independent log
standard deviation is stored as a plain tensor attribute, torch.zeros(act_dim), instead of an
nn.Parameter. The mean network learns from the policy-gradient loss; log_std never requires
grad, is not in policy.parameters(), and its .grad stays None.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
from torch.distributions import Normal

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.policy.log_std"
EXPECT = "grad_none"


class GaussianPolicy(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.mu = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, act_dim))
        self.log_std = torch.zeros(act_dim)  # <-- CUT

    def dist(self, obs):
        return Normal(self.mu(obs), self.log_std.exp())


class PGAgent:
    def __init__(self, obs_dim=3, act_dim=2):
        self.policy = GaussianPolicy(obs_dim, act_dim)
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=3e-4)

    def update(self, obs, actions, returns):
        logp = self.policy.dist(obs).log_prob(actions).sum(-1)
        adv = (returns - returns.mean()) / (returns.std() + 1e-8)
        loss = -(logp * adv).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    agent = PGAgent()
    obs = torch.randn(16, 3)
    with torch.no_grad():
        actions = agent.policy.dist(obs).sample()
    returns = torch.randn(16)
    loss = agent.update(obs, actions, returns)
    return {"agent": agent, "loss": loss}
