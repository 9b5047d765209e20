"""DDPG agent: the target networks and the no_grad TD target are correct, and the
critic trains. In the actor update the user detached the actor's action before
feeding it to the critic ("so the critic is not updated by the actor loss"), so the
actor loss backpropagates only into the critic and the actor's .grad stays None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.actor.net[0].weight"
EXPECT = "grad_none"


class Actor(nn.Module):
    def __init__(self, obs=3, act=1):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs, 32), nn.ReLU(), nn.Linear(32, act), nn.Tanh())

    def forward(self, s):
        return 2.0 * self.net(s)


class Critic(nn.Module):
    def __init__(self, obs=3, act=1):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs + act, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, s, a):
        return self.net(torch.cat([s, a], dim=-1))


class DDPGAgent:
    def __init__(self, gamma=0.99, tau=0.005):
        self.actor, self.critic = Actor(), Critic()
        self.actor_t, self.critic_t = Actor(), Critic()
        self.actor_t.load_state_dict(self.actor.state_dict())
        self.critic_t.load_state_dict(self.critic.state_dict())
        self.a_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-3)
        self.c_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.gamma, self.tau = gamma, tau

    def update(self, s, a, r, s2, d):
        with torch.no_grad():
            y = r + self.gamma * (1 - d) * self.critic_t(s2, self.actor_t(s2))
        critic_loss = F.mse_loss(self.critic(s, a), y)
        self.c_opt.zero_grad()
        critic_loss.backward()
        self.c_opt.step()

        actor_loss = -self.critic(s, self.actor(s).detach()).mean()  # <-- CUT
        self.a_opt.zero_grad()
        actor_loss.backward()
        self.a_opt.step()

        with torch.no_grad():
            for net, tgt in ((self.actor, self.actor_t), (self.critic, self.critic_t)):
                for p, pt in zip(net.parameters(), tgt.parameters()):
                    pt.mul_(1 - self.tau).add_(self.tau * p)
        return critic_loss.item(), actor_loss.item()


def run():
    torch.manual_seed(0)
    agent = DDPGAgent()
    s, a = torch.randn(64, 3), torch.rand(64, 1) * 4 - 2
    r, s2, d = torch.randn(64, 1), torch.randn(64, 3), torch.zeros(64, 1)
    logs = agent.update(s, a, r, s2, d)
    return {"agent": agent, "logs": logs}
