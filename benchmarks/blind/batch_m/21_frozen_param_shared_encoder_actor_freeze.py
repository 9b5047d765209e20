"""Actor-critic with a shared image encoder. To stop the actor loss from updating
the encoder, the user calls `encoder.requires_grad_(False)` in update_actor() but
never turns it back on. The first critic update trains the encoder; from the
second iteration on, the critic update leaves encoder.grad as None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.encoder[0].weight"
EXPECT = "grad_none"


class Agent:
    def __init__(self, obs=12, feat=16, act=2):
        self.encoder = nn.Sequential(nn.Linear(obs, feat), nn.LayerNorm(feat), nn.Tanh())
        self.actor = nn.Sequential(nn.Linear(feat, 32), nn.ReLU(), nn.Linear(32, act), nn.Tanh())
        self.critic = nn.Sequential(nn.Linear(feat + act, 32), nn.ReLU(), nn.Linear(32, 1))
        self.c_opt = torch.optim.Adam(list(self.encoder.parameters()) + list(self.critic.parameters()), lr=1e-3)
        self.a_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-3)

    def update_critic(self, obs, act, target_q):
        q = self.critic(torch.cat([self.encoder(obs), act], -1))
        loss = F.mse_loss(q, target_q)
        self.c_opt.zero_grad()
        loss.backward()
        self.c_opt.step()
        return loss.item()

    def update_actor(self, obs):
        self.encoder.requires_grad_(False)  # <-- CUT
        self.critic.requires_grad_(False)
        h = self.encoder(obs)
        loss = -self.critic(torch.cat([h, self.actor(h)], -1)).mean()
        self.a_opt.zero_grad()
        loss.backward()
        self.a_opt.step()
        self.critic.requires_grad_(True)
        return loss.item()


def run():
    torch.manual_seed(0)
    agent = Agent()
    logs = []
    for _ in range(2):
        obs, act, tq = torch.randn(32, 12), torch.rand(32, 2) * 2 - 1, torch.randn(32, 1)
        logs.append((agent.update_critic(obs, act, tq), agent.update_actor(obs)))
    return {"agent": agent, "logs": logs}
