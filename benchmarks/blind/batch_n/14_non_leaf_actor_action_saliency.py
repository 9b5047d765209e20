"""DDPG: to inspect dQ/da the user reads action.grad after the actor loss backward; the action
is the actor's output (a non-leaf) and nobody called retain_grad().
Thread: DDPG actor update "action.grad is None" (reconstructed from memory)."""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.last_action"
EXPECT = "grad_none"


class Agent:
    def __init__(self):
        self.actor = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2), nn.Tanh())
        self.critic = nn.Linear(5, 1)
        self.last_action = None

    def actor_loss(self, obs):
        self.last_action = self.actor(obs)  # <-- CUT
        return -self.critic(torch.cat([obs, self.last_action], -1)).mean()


def run():
    torch.manual_seed(0)
    agent = Agent()
    loss = agent.actor_loss(torch.randn(6, 3))
    loss.backward()
    return {"agent": agent}
