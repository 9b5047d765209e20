"""DDPG agent: the actor update evaluates the critic on actor(s).detach(), a copy of
the critic-update line where the replay action needed no gradient. The critic step
(no_grad bootstrap from target nets, Polyak update through .data) is correct, and the
actor loss backward runs through the critic, but the actor never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.actor.net[0].weight"
EXPECT = "grad_none"


class Actor(nn.Module):
    def __init__(self, n_obs=6, n_act=2, max_action=1.0):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_obs, 32), nn.ReLU(), nn.Linear(32, n_act))
        self.max_action = max_action

    def forward(self, s):
        return self.max_action * torch.tanh(self.net(s))


class Critic(nn.Module):
    def __init__(self, n_obs=6, n_act=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_obs + n_act, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, s, a):
        return self.net(torch.cat([s, a], dim=-1)).squeeze(-1)


class DDPGAgent:
    def __init__(self, cfg):
        self.cfg = cfg
        self.actor, self.critic = Actor(), Critic()
        self.actor_t, self.critic_t = Actor(), Critic()
        self.actor_t.load_state_dict(self.actor.state_dict())
        self.critic_t.load_state_dict(self.critic.state_dict())
        self.a_opt = torch.optim.Adam(self.actor.parameters(), lr=cfg["actor_lr"])
        self.c_opt = torch.optim.Adam(self.critic.parameters(), lr=cfg["critic_lr"])

    def update_critic(self, s, a, r, s2, done):
        with torch.no_grad():
            q_next = self.critic_t(s2, self.actor_t(s2))
            y = r + self.cfg["gamma"] * (1 - done) * q_next
        loss = F.mse_loss(self.critic(s, a), y)
        self.c_opt.zero_grad()
        loss.backward()
        self.c_opt.step()
        return loss.item()

    def update_actor(self, s):
        a_pi = self.actor(s).detach()  # <-- CUT
        loss = -self.critic(s, a_pi).mean()
        self.a_opt.zero_grad()
        loss.backward()
        self.a_opt.step()
        return loss

    @torch.no_grad()
    def soft_update(self):
        tau = self.cfg["tau"]
        for net, tgt in ((self.actor, self.actor_t), (self.critic, self.critic_t)):
            for p, pt in zip(net.parameters(), tgt.parameters()):
                pt.data.mul_(1 - tau).add_(tau * p.data)


def run():
    torch.manual_seed(0)
    cfg = {"gamma": 0.99, "tau": 0.005, "actor_lr": 1e-3, "critic_lr": 1e-3}
    agent = DDPGAgent(cfg)
    s, s2 = torch.randn(64, 6), torch.randn(64, 6)
    a = torch.rand(64, 2) * 2 - 1
    r = torch.randn(64)
    done = (torch.rand(64) < 0.05).float()
    critic_loss = agent.update_critic(s, a, r, s2, done)
    actor_loss = agent.update_actor(s)
    agent.soft_update()
    return {"agent": agent, "critic_loss": critic_loss, "actor_loss": actor_loss}
