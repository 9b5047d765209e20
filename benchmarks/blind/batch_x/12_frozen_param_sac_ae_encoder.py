"""SAC-AE style agent with a shared conv encoder: the actor update freezes the encoder
with a requires_grad=False helper (instead of detaching features) and never unfreezes
it, so from the second iteration the critic loss no longer trains the encoder.
Thread (from memory): SAC-AE style repo issue 'encoder stops training after actor update'."""
import torch
import torch.nn as nn

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.encoder.conv.weight"
EXPECT = "grad_none"


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2)
        self.fc = nn.Linear(8 * 7 * 7, 16)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))


def freeze(module):
    for p in module.parameters():
        p.requires_grad = False  # <-- CUT


class Agent:
    def __init__(self):
        self.encoder = Encoder()
        self.actor = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2), nn.Tanh())
        self.critic = nn.Sequential(nn.Linear(18, 32), nn.ReLU(), nn.Linear(32, 1))
        self.critic_opt = torch.optim.Adam(list(self.encoder.parameters()) + list(self.critic.parameters()), lr=1e-3)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-3)

    def update(self, obs, act, target_q):
        h = self.encoder(obs)
        critic_loss = (self.critic(torch.cat([h, act], 1)) - target_q).pow(2).mean()
        self.critic_opt.zero_grad(set_to_none=True)
        critic_loss.backward()
        self.critic_opt.step()
        freeze(self.encoder)
        h = self.encoder(obs)
        a = self.actor(h)
        actor_loss = -self.critic(torch.cat([h, a], 1)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()


def run():
    torch.manual_seed(0)
    agent = Agent()
    obs = torch.randn(4, 3, 16, 16)
    act = torch.rand(4, 2)
    target_q = torch.randn(4, 1)
    for _ in range(2):
        agent.update(obs, act, target_q)
    return {"agent": agent}
