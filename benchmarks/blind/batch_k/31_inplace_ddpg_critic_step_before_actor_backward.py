"""DDPG update written the pre-1.5 way: critic loss and actor loss are both computed from one
forward pass, then critic_opt.step() runs before actor_loss.backward(). The step rewrites the
critic weights that the actor loss saved, so backward raises "modified by an inplace operation".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, max_a=2.0):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, act_dim), nn.Tanh())
        self.max_a = max_a

    def forward(self, s):
        return self.max_a * self.net(s)


class Critic(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + act_dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, s, a):
        return self.net(torch.cat([s, a], 1))


class DDPG:
    def __init__(self, obs_dim=3, act_dim=1, gamma=0.99, tau=0.005):
        self.actor, self.critic = Actor(obs_dim, act_dim), Critic(obs_dim, act_dim)
        self.actor_t, self.critic_t = Actor(obs_dim, act_dim), Critic(obs_dim, act_dim)
        self.actor_t.load_state_dict(self.actor.state_dict())
        self.critic_t.load_state_dict(self.critic.state_dict())
        self.a_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-4)
        self.c_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.gamma, self.tau = gamma, tau

    def update(self, s, a, r, s2, d):
        with torch.no_grad():
            y = r + self.gamma * (1 - d) * self.critic_t(s2, self.actor_t(s2))
        critic_loss = F.mse_loss(self.critic(s, a), y)
        actor_loss = -self.critic(s, self.actor(s)).mean()

        self.c_opt.zero_grad()
        critic_loss.backward()
        self.c_opt.step()  # <-- CUT
        self.a_opt.zero_grad()
        actor_loss.backward()
        self.a_opt.step()

        with torch.no_grad():
            for p, pt in zip(self.critic.parameters(), self.critic_t.parameters()):
                pt.mul_(1 - self.tau).add_(self.tau * p)
        return critic_loss.item(), actor_loss.item()


def run():
    torch.manual_seed(0)
    agent = DDPG()
    s, s2 = torch.randn(64, 3), torch.randn(64, 3)
    a, r, d = torch.rand(64, 1) * 4 - 2, torch.randn(64, 1), torch.zeros(64, 1)
    losses = agent.update(s, a, r, s2, d)
    return {"agent": agent, "losses": losses}
