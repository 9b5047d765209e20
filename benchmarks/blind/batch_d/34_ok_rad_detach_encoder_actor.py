"""Control (RAD/CURL SAC, MishaLaskin/rad#4): the actor update runs the shared
conv encoder with detach_encoder=True, which looks like the encoder never
trains. It does: the critic update backpropagates into the encoder, and the
actor's detach only stops the actor loss from moving it.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.critic.encoder.convs[0].weight"
EXPECT = "grad_ok"


class PixelEncoder(nn.Module):
    def __init__(self, obs_shape=(3, 12, 12), feature_dim=8):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(obs_shape[0], 8, 3, stride=2), nn.Conv2d(8, 8, 3)])
        self.fc = nn.Linear(8 * 3 * 3, feature_dim)

    def forward(self, obs, detach=False):
        h = F.relu(self.convs[1](F.relu(self.convs[0](obs)))).flatten(1)
        if detach:
            h = h.detach()
        return torch.tanh(self.fc(h))


class Actor(nn.Module):
    def __init__(self, encoder, action_dim=2):
        super().__init__()
        self.encoder = encoder
        self.trunk = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2 * action_dim))

    def forward(self, obs, detach_encoder=False):
        mu, log_std = self.trunk(self.encoder(obs, detach=detach_encoder)).chunk(2, dim=-1)
        return torch.tanh(mu + log_std.clamp(-5, 2).exp() * torch.randn_like(mu))


class Critic(nn.Module):
    def __init__(self, action_dim=2):
        super().__init__()
        self.encoder = PixelEncoder()
        self.Q1 = nn.Sequential(nn.Linear(8 + action_dim, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, obs, action, detach_encoder=False):
        return self.Q1(torch.cat([self.encoder(obs, detach=detach_encoder), action], dim=-1))


class RadSacAgent:
    def __init__(self):
        self.critic = Critic()
        self.actor = Actor(self.critic.encoder)  # tie the conv encoder
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.actor_optimizer = torch.optim.Adam(self.actor.trunk.parameters(), lr=1e-3)

    def update_critic(self, obs, action, target_Q):
        current_Q = self.critic(obs, action)
        critic_loss = F.mse_loss(current_Q, target_Q)  # <-- CUT
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()
        return critic_loss

    def update_actor(self, obs):
        pi = self.actor(obs, detach_encoder=True)
        actor_loss = -self.critic(obs, pi, detach_encoder=True).mean()
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()
        return actor_loss


def run():
    torch.manual_seed(0)
    agent = RadSacAgent()
    obs = torch.rand(4, 3, 12, 12)
    action = torch.rand(4, 2) * 2 - 1
    target_Q = torch.randn(4, 1)
    critic_loss = agent.update_critic(obs, action, target_Q)
    actor_loss = agent.update_actor(obs)
    return {"agent": agent, "critic_loss": critic_loss, "actor_loss": actor_loss}
