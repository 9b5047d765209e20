"""REINFORCE with a Categorical policy: after backward the user inspects dist.probs.grad to see
how the update would move each action probability (the thread prints probs-grad and
log_prob-grad). Categorical(probs=...) stores a normalised copy, a non-leaf without retain_grad,
so dist.probs.grad is None although the policy network's weights do get gradients.
Thread: discuss.pytorch.org/t/117395 (REINFORCE with a Multinomial distribution), adapted.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "dist.probs"
EXPECT = "grad_none"


class Policy(nn.Module):
    def __init__(self, obs_dim=4, n_actions=4):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, n_actions))

    def forward(self, obs):
        return F.softmax(self.fc(obs), dim=-1)


def reinforce_step(policy, optimizer, obs, reward_fn):
    probs = policy(obs)
    dist = Categorical(probs=probs)  # <-- CUT
    action = dist.sample()
    log_prob = dist.log_prob(action)
    log_prob.retain_grad()
    loss = -(log_prob * reward_fn(action)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return dist, log_prob, loss


def run():
    torch.manual_seed(0)
    policy = Policy()
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.01)
    obs = torch.randn(6, 4)
    dist, log_prob, loss = reinforce_step(policy, optimizer, obs, lambda a: (a == 2).float() - 0.25)
    return {"policy": policy, "dist": dist, "log_prob": log_prob, "loss": loss}
