"""A2C agent with one optimizer over actor and critic. The update was written as two blocks,
each starting with optimizer.zero_grad() (copied from a per-network version): the second
zero_grad() runs after actor_loss.backward() and sets the actor's grads to None before
optimizer.step(). The critic trains; the actor's .grad is None at the step.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.actor[0].weight"
EXPECT = "grad_none"


class A2CAgent:
    def __init__(self, obs_dim=4, n_actions=2, gamma=0.99):
        self.actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))
        self.critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))
        self.optimizer = torch.optim.Adam(list(self.actor.parameters()) + list(self.critic.parameters()), lr=7e-4)
        self.gamma = gamma

    def update(self, obs, actions, rewards, next_obs, dones):
        values = self.critic(obs).squeeze(-1)
        with torch.no_grad():
            targets = rewards + self.gamma * (1 - dones) * self.critic(next_obs).squeeze(-1)
        advantages = (targets - values).detach()
        dist = Categorical(logits=self.actor(obs))
        actor_loss = -(dist.log_prob(actions) * advantages).mean() - 0.01 * dist.entropy().mean()
        self.optimizer.zero_grad()
        actor_loss.backward()
        critic_loss = F.mse_loss(values, targets)
        self.optimizer.zero_grad()  # <-- CUT
        critic_loss.backward()
        nn.utils.clip_grad_norm_(list(self.actor.parameters()) + list(self.critic.parameters()), 0.5)
        self.optimizer.step()
        return actor_loss.item(), critic_loss.item()


def run():
    torch.manual_seed(0)
    agent = A2CAgent()
    obs, next_obs = torch.randn(16, 4), torch.randn(16, 4)
    actions = torch.randint(0, 2, (16,))
    rewards, dones = torch.randn(16), torch.zeros(16)
    losses = agent.update(obs, actions, rewards, next_obs, dones)
    return {"agent": agent, "losses": losses}
