"""Control: TD3 critic update. Targets come from target networks under torch.no_grad() with
clipped target-policy noise, the target nets are filled by load_state_dict and later Polyak-updated
through .data, and losses are logged with .item(). agent.q1.net[0].weight gets a normal gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.q1.net[0].weight"
EXPECT = "grad_ok"


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, act_dim), nn.Tanh())

    def forward(self, s):
        return self.net(s)


class Critic(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + act_dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, s, a):
        return self.net(torch.cat([s, a], -1)).squeeze(-1)


class TD3:
    def __init__(self, obs_dim=5, act_dim=2, gamma=0.99, tau=0.005, noise=0.2, noise_clip=0.5):
        self.actor, self.actor_t = Actor(obs_dim, act_dim), Actor(obs_dim, act_dim)
        self.q1, self.q2 = Critic(obs_dim, act_dim), Critic(obs_dim, act_dim)
        self.q1_t, self.q2_t = Critic(obs_dim, act_dim), Critic(obs_dim, act_dim)
        for src, dst in ((self.actor, self.actor_t), (self.q1, self.q1_t), (self.q2, self.q2_t)):
            dst.load_state_dict(src.state_dict())
        self.c_opt = torch.optim.Adam(list(self.q1.parameters()) + list(self.q2.parameters()), lr=3e-4)
        self.gamma, self.tau, self.noise, self.noise_clip = gamma, tau, noise, noise_clip

    def critic_step(self, s, a, r, s2, d):
        with torch.no_grad():
            eps = (torch.randn_like(a) * self.noise).clamp(-self.noise_clip, self.noise_clip)
            a2 = (self.actor_t(s2) + eps).clamp(-1, 1)
            y = r + self.gamma * (1 - d) * torch.min(self.q1_t(s2, a2), self.q2_t(s2, a2))
        loss = F.mse_loss(self.q1(s, a), y) + F.mse_loss(self.q2(s, a), y)  # <-- CUT
        self.c_opt.zero_grad()
        loss.backward()
        self.c_opt.step()
        return loss.item()

    def soft_update(self):
        for net, tgt in ((self.q1, self.q1_t), (self.q2, self.q2_t), (self.actor, self.actor_t)):
            for p, pt in zip(net.parameters(), tgt.parameters()):
                pt.data.mul_(1 - self.tau).add_(self.tau * p.data)


def run():
    torch.manual_seed(0)
    agent = TD3()
    s, s2 = torch.randn(32, 5), torch.randn(32, 5)
    a, r, d = torch.rand(32, 2) * 2 - 1, torch.randn(32), torch.zeros(32)
    loss = agent.critic_step(s, a, r, s2, d)
    agent.soft_update()
    return {"agent": agent, "loss": loss}
