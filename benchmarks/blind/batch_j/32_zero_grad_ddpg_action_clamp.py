"""DDPG actor update. The actor scales its tanh-free output by max_action from the env config (a
motor speed limit of 10000 rpm, raw units), then act() clamps to the normalised box [-1, 1] before
the critic. Every action lands outside the box, clamp passes no gradient, and the actor's grad is
all zeros; the critic step (target networks under no_grad) trains normally.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.actor.fc1.weight"
EXPECT = "grad_zero"

CONFIG = {"obs_dim": 5, "act_dim": 2, "max_action": 10000.0, "gamma": 0.99}


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, max_action):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(obs_dim, 64), nn.Linear(64, act_dim)
        self.max_action = max_action

    def forward(self, s):
        return self.max_action * self.fc2(F.relu(self.fc1(s)))


class Critic(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + act_dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, s, a):
        return self.net(torch.cat([s, a], -1))


class DDPGAgent:
    def __init__(self, cfg):
        self.cfg = cfg
        self.actor = Actor(cfg["obs_dim"], cfg["act_dim"], cfg["max_action"])
        self.critic = Critic(cfg["obs_dim"], cfg["act_dim"])
        self.actor_target = Actor(cfg["obs_dim"], cfg["act_dim"], cfg["max_action"])
        self.critic_target = Critic(cfg["obs_dim"], cfg["act_dim"])
        self.actor_target.load_state_dict(self.actor.state_dict())
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-4)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def act(self, s, net=None):
        return torch.clamp((net or self.actor)(s), -1.0, 1.0)  # <-- CUT

    def update(self, s, a, r, s2, d):
        with torch.no_grad():
            y = r + self.cfg["gamma"] * (1 - d) * self.critic_target(s2, self.act(s2, self.actor_target))
        critic_loss = F.mse_loss(self.critic(s, a), y)
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        actor_loss = -self.critic(s, self.act(s)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
        return critic_loss.item(), actor_loss.item()


def run():
    torch.manual_seed(0)
    agent = DDPGAgent(CONFIG)
    s, s2 = torch.randn(32, 5), torch.randn(32, 5)
    a = torch.rand(32, 2) * 2 - 1
    r, d = torch.randn(32, 1), torch.zeros(32, 1)
    losses = agent.update(s, a, r, s2, d)
    return {"agent": agent, "losses": losses}
