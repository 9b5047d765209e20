"""Actor-critic with a 2-D Gaussian policy whose means must lie in (0, 2 pi) x (0, pi/2):
sigmoid outputs go through a numpy helper get_params_from_policy_thetas() that builds the mean
and covariance, then back into torch.FloatTensor for MultivariateNormal. The log-prob has no
path to the actor; critic_loss keeps backward running, so the actor weights never update.
Thread: discuss.pytorch.org/t/74548 (Actor Critic with Multivariate Normal - weights fail to update).
"""
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import MultivariateNormal

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.actor.fc1.weight"
EXPECT = "grad_none"


class GenericNetwork(nn.Module):
    def __init__(self, in_dim, out_dim, lr=1e-3):
        super().__init__()
        self.fc1 = nn.Linear(in_dim, 64)
        self.fc2 = nn.Linear(64, out_dim)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=lr)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def get_params_from_policy_thetas(thetas):
    mu = np.array([thetas[0] * 2 * np.pi, thetas[1] * np.pi / 2])
    S = np.diag([0.1, 0.05])
    return mu, S


class Agent:
    def __init__(self, obs_dim=6, gamma=0.99):
        self.gamma = gamma
        self.actor = GenericNetwork(obs_dim, 2)
        self.critic = GenericNetwork(obs_dim, 1)
        self.log_probs = None

    def choose_action(self, observation):
        policy_thetas = torch.sigmoid(self.actor(observation))
        mu, S = get_params_from_policy_thetas(policy_thetas.detach().numpy())  # <-- CUT
        action_probs = MultivariateNormal(torch.FloatTensor(mu), torch.FloatTensor(S))
        action = action_probs.sample()
        self.log_probs = action_probs.log_prob(action)
        return action

    def learn(self, state, reward, new_state, done):
        self.actor.optimizer.zero_grad()
        self.critic.optimizer.zero_grad()
        critic_value = self.critic(state)
        critic_value_ = self.critic(new_state)
        delta = (reward + self.gamma * critic_value_ * (1 - int(done))) - critic_value
        actor_loss = -self.log_probs * delta
        critic_loss = delta ** 2
        (actor_loss + critic_loss).sum().backward()
        self.actor.optimizer.step()
        self.critic.optimizer.step()


def run():
    torch.manual_seed(0)
    agent = Agent()
    observation = torch.randn(6)
    action = agent.choose_action(observation)
    new_observation = observation + 0.05 * torch.randn(6)
    agent.learn(observation, 1.0, new_observation, False)
    return {"agent": agent, "action": action}
