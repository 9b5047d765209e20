"""Control: TD3/DDPG-style update with every "suspicious" cut in its legitimate place: target
networks created by load_state_dict and frozen with requires_grad_(False), the bootstrap target
under torch.no_grad(), a polyak update through .data after the step, and .item() logging. The
actor's tanh keeps actions inside the box, so its gradient through the critic is nonzero.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.actor.fc1.weight"
EXPECT = "grad_ok"


class Actor(nn.Module):
    def __init__(self, obs_dim=5, act_dim=2):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(obs_dim, 64), nn.Linear(64, act_dim)

    def forward(self, s):
        return torch.tanh(self.fc2(F.relu(self.fc1(s))))


class Critic(nn.Module):
    def __init__(self, obs_dim=5, act_dim=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + act_dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, s, a):
        return self.net(torch.cat([s, a], -1))


class Agent:
    def __init__(self, gamma=0.99, tau=0.005):
        self.gamma, self.tau = gamma, tau
        self.actor, self.critic = Actor(), Critic()
        self.actor_target, self.critic_target = Actor(), Critic()
        self.actor_target.load_state_dict(self.actor.state_dict())
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.actor_target.requires_grad_(False)
        self.critic_target.requires_grad_(False)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-4)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.log = {}

    def soft_update(self, net, target):
        for p, tp in zip(net.parameters(), target.parameters()):
            tp.data.mul_(1 - self.tau).add_(self.tau * p.data)

    def update(self, s, a, r, s2, d):
        with torch.no_grad():
            y = r + self.gamma * (1 - d) * self.critic_target(s2, self.actor_target(s2))
        critic_loss = F.mse_loss(self.critic(s, a), y)
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        actor_loss = -self.critic(s, self.actor(s)).mean()  # <-- CUT
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
        self.soft_update(self.actor, self.actor_target)
        self.soft_update(self.critic, self.critic_target)
        self.log = {"critic": critic_loss.item(), "actor": actor_loss.item()}


def run():
    torch.manual_seed(0)
    agent = Agent()
    s, s2 = torch.randn(32, 5), torch.randn(32, 5)
    a = torch.rand(32, 2) * 2 - 1
    r, d = torch.randn(32, 1), torch.zeros(32, 1)
    agent.update(s, a, r, s2, d)
    return {"agent": agent}
