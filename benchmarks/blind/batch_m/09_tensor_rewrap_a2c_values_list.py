"""A2C with a shared trunk and separate policy and value heads. Per-step values are
collected in a Python list and turned into a tensor with `torch.tensor(values)`
(log-probs are stacked correctly). The policy trains, but the value head gets no
gradient from the critic loss, which is computed on the copy.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.value_head.weight"
EXPECT = "grad_none"


class ActorCritic(nn.Module):
    def __init__(self, obs=4, n_act=2):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs, 32), nn.Tanh())
        self.policy_head = nn.Linear(32, n_act)
        self.value_head = nn.Linear(32, 1)

    def forward(self, s):
        h = self.trunk(s)
        return self.policy_head(h), self.value_head(h).squeeze(-1)


def discounted_returns(rewards, gamma):
    out, g = [], 0.0
    for r in reversed(rewards):
        g = r + gamma * g
        out.insert(0, g)
    return torch.tensor(out)


class A2C:
    def __init__(self, gamma=0.99):
        self.model = ActorCritic()
        self.opt = torch.optim.Adam(self.model.parameters(), lr=7e-4)
        self.gamma = gamma

    def episode_update(self, states, rewards):
        log_probs, values = [], []
        for s in states:
            logits, v = self.model(s)
            dist = Categorical(logits=logits)
            a = dist.sample()
            log_probs.append(dist.log_prob(a))
            values.append(v)
        log_probs = torch.stack(log_probs)
        values = torch.tensor(values)  # <-- CUT
        returns = discounted_returns(rewards, self.gamma)
        advantage = returns - values
        actor_loss = -(log_probs * advantage.detach()).mean()
        critic_loss = F.mse_loss(values, returns)
        loss = actor_loss + 0.5 * critic_loss
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    agent = A2C()
    states = [torch.randn(4) for _ in range(10)]
    rewards = [1.0] * 10
    loss = agent.episode_update(states, rewards)
    return {"agent": agent, "model": agent.model, "loss": loss}
