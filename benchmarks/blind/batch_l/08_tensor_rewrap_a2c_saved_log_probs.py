"""Episodic actor-critic (REINFORCE with a learned baseline). select_action appends each
step's log-prob to a Python list, and finish_episode packs the list with
torch.tensor(self.saved_log_probs). The value loss keeps backward working and the critic
trains, but the packed log-probs are a new leaf, so the policy gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.policy[0].weight"
EXPECT = "grad_none"


class Agent:
    def __init__(self, n_obs=4, n_act=2, gamma=0.99):
        self.policy = nn.Sequential(nn.Linear(n_obs, 32), nn.ReLU(), nn.Linear(32, n_act))
        self.value = nn.Sequential(nn.Linear(n_obs, 32), nn.ReLU(), nn.Linear(32, 1))
        self.opt = torch.optim.Adam(list(self.policy.parameters()) + list(self.value.parameters()), lr=1e-3)
        self.gamma = gamma
        self.saved_log_probs, self.saved_values, self.rewards = [], [], []

    def select_action(self, state):
        dist = Categorical(logits=self.policy(state))
        action = dist.sample()
        self.saved_log_probs.append(dist.log_prob(action))
        self.saved_values.append(self.value(state).squeeze(-1))
        return action.item()

    def finish_episode(self):
        R, returns = 0.0, []
        for r in reversed(self.rewards):
            R = r + self.gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)
        log_probs = torch.tensor(self.saved_log_probs)  # <-- CUT
        values = torch.stack(self.saved_values)
        adv = returns - values.detach()
        loss = -(log_probs * adv).sum() + F.smooth_l1_loss(values, returns)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.saved_log_probs, self.saved_values, self.rewards = [], [], []
        return loss


def run():
    torch.manual_seed(0)
    agent = Agent()
    state = torch.randn(4)
    for t in range(12):
        a = agent.select_action(state)
        state = state + 0.1 * (a - 0.5) + 0.05 * torch.randn(4)
        agent.rewards.append(1.0 if state[0] < 1.0 else 0.0)
    loss = agent.finish_episode()
    return {"agent": agent, "loss": loss}
