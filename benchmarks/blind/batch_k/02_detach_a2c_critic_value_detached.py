"""Advantage actor-critic with separate actor and critic nets. The advantage is detached
for the policy loss (correct), but the helper that returns V(s) detaches it for every
caller, so the critic's MSE loss has no path back to the critic: critic.v[0].weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.critic.v[0].weight"
EXPECT = "grad_none"


class Actor(nn.Module):
    def __init__(self, obs_dim, n_act):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, n_act))

    def forward(self, s):
        return torch.distributions.Categorical(logits=self.pi(s))


class Critic(nn.Module):
    def __init__(self, obs_dim):
        super().__init__()
        self.v = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 1))

    def forward(self, s):
        return self.v(s).squeeze(-1)


class A2CAgent:
    def __init__(self, obs_dim=6, n_act=3, gamma=0.99, value_coef=0.5):
        self.actor, self.critic = Actor(obs_dim, n_act), Critic(obs_dim)
        self.gamma, self.value_coef = gamma, value_coef
        self.opt = torch.optim.Adam(list(self.actor.parameters()) + list(self.critic.parameters()), lr=7e-4)

    def value(self, s):
        return self.critic(s).detach()  # <-- CUT

    def returns(self, rewards, dones, last_v):
        out, R = [], last_v
        for r, d in zip(reversed(rewards), reversed(dones)):
            R = r + self.gamma * R * (1.0 - d)
            out.append(R)
        return torch.stack(out[::-1])

    def update(self, states, actions, rewards, dones, last_state):
        with torch.no_grad():
            last_v = self.critic(last_state)
        rets = self.returns(rewards, dones, last_v)
        values = self.value(states)
        adv = (rets - values).detach()
        logp = self.actor(states).log_prob(actions)
        policy_loss = -(logp * adv).mean()
        value_loss = F.mse_loss(values, rets)
        loss = policy_loss + self.value_coef * value_loss
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    agent = A2CAgent()
    T, N = 5, 4
    states = torch.randn(T, N, 6)
    actions = torch.randint(0, 3, (T, N))
    rewards = [torch.randn(N) for _ in range(T)]
    dones = [(torch.rand(N) < 0.1).float() for _ in range(T)]
    loss = agent.update(states, actions, rewards, dones, torch.randn(N, 6))
    return {"agent": agent, "loss": loss}
