"""DDPG agent: actor loss feeds critic(s, actor(s).detach()) copied from the critic step.
Target networks are updated by polyak through .data (legitimate); the actor gets no gradient.
Thread: DDPG actor not learning, actor grads None (forum, reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "detach"
QUERY = 'agent.actor.net[0].weight'
EXPECT = "grad_none"

class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2), nn.Tanh())
    def forward(self, s):
        return self.net(s)

class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    def forward(self, s, a):
        return self.net(torch.cat([s, a], -1))

class DDPG:
    def __init__(self, tau=0.005):
        self.actor, self.critic = Actor(), Critic()
        self.actor_t, self.critic_t = Actor(), Critic()
        self.actor_t.load_state_dict(self.actor.state_dict())
        self.critic_t.load_state_dict(self.critic.state_dict())
        self.a_opt = torch.optim.Adam(self.actor.parameters(), 1e-3)
        self.c_opt = torch.optim.Adam(self.critic.parameters(), 1e-3)
        self.tau = tau
    def update(self, s, a, r, s2, d):
        with torch.no_grad():
            y = r + 0.99 * (1 - d) * self.critic_t(s2, self.actor_t(s2))
        c_loss = F.mse_loss(self.critic(s, a), y)
        self.c_opt.zero_grad(); c_loss.backward(); self.c_opt.step()
        act = self.actor(s).detach()  # <-- CUT
        a_loss = -self.critic(s, act).mean()
        self.a_opt.zero_grad(); a_loss.backward(); self.a_opt.step()
        for p, pt in zip(self.actor.parameters(), self.actor_t.parameters()):
            pt.data.mul_(1 - self.tau).add_(self.tau * p.data)

def run():
    torch.manual_seed(0)
    agent = DDPG()
    s, a, s2 = torch.randn(8, 4), torch.rand(8, 2) * 2 - 1, torch.randn(8, 4)
    r, d = torch.randn(8, 1), torch.zeros(8, 1)
    agent.update(s, a, r, s2, d)
    return {"agent": agent}
