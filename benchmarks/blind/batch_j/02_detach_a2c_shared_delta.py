"""One-step actor-critic agent (the "Machine Learning with Phil" shape): the user detached the TD
error so the policy term would not push gradients into the critic, but then reused the same
detached delta for critic_loss = delta ** 2. The sum still backprops through the actor's
log-prob, so nothing raises; the critic never gets a gradient.
Thread: discuss.pytorch.org/t/74548 (Actor Critic with Multivariate Normal), adapted.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.critic[0].weight"
EXPECT = "grad_none"


class Agent:
    def __init__(self, obs_dim=4, n_actions=2, gamma=0.99):
        self.gamma = gamma
        self.actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, n_actions))
        self.critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, 1))
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=1e-3)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.log_probs = None

    def choose_action(self, observation):
        probabilities = F.softmax(self.actor(observation), dim=-1)
        action_probs = Categorical(probabilities)
        action = action_probs.sample()
        self.log_probs = action_probs.log_prob(action)
        return action

    def learn(self, state, reward, new_state, done):
        self.actor_optimizer.zero_grad()
        self.critic_optimizer.zero_grad()
        critic_value = self.critic(state).squeeze(-1)
        critic_value_ = self.critic(new_state).squeeze(-1)
        delta = (reward + self.gamma * critic_value_ * (1 - done) - critic_value).detach()  # <-- CUT
        actor_loss = -self.log_probs * delta
        critic_loss = delta ** 2
        (actor_loss + critic_loss).mean().backward()
        self.actor_optimizer.step()
        self.critic_optimizer.step()


def run():
    torch.manual_seed(0)
    agent = Agent()
    state = torch.randn(8, 4)
    agent.choose_action(state)
    new_state = state + 0.1 * torch.randn(8, 4)
    reward = torch.randn(8)
    done = torch.zeros(8)
    agent.learn(state, reward, new_state, done)
    return {"agent": agent}
