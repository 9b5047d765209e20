"""DDPG adapted to a discrete action space: the actor outputs action probabilities, the
agent takes argmax and one-hot encodes it before feeding the critic. The critic trains on
replayed actions, but the actor loss -Q(s, onehot(argmax)) gives agent.actor.net[0].weight no grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.actor.net[0].weight"
EXPECT = "grad_none"


class Actor(nn.Module):
    def __init__(self, obs_dim, n_act):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, n_act), nn.Softmax(-1))

    def forward(self, s):
        return self.net(s)


class Critic(nn.Module):
    def __init__(self, obs_dim, n_act):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + n_act, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, s, a_onehot):
        return self.net(torch.cat([s, a_onehot], -1)).squeeze(-1)


class DiscreteDDPG:
    def __init__(self, obs_dim=6, n_act=4, gamma=0.95):
        self.n_act, self.gamma = n_act, gamma
        self.actor, self.critic = Actor(obs_dim, n_act), Critic(obs_dim, n_act)
        self.critic_t = Critic(obs_dim, n_act)
        self.critic_t.load_state_dict(self.critic.state_dict())
        self.a_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-4)
        self.c_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def policy_action(self, s):
        idx = self.actor(s).argmax(dim=-1)  # <-- CUT
        return F.one_hot(idx, self.n_act).float()

    def update(self, s, a, r, s2):
        with torch.no_grad():
            y = r + self.gamma * self.critic_t(s2, self.policy_action(s2))
        c_loss = F.mse_loss(self.critic(s, F.one_hot(a, self.n_act).float()), y)
        self.c_opt.zero_grad()
        c_loss.backward()
        self.c_opt.step()

        a_loss = -self.critic(s, self.policy_action(s)).mean()
        self.a_opt.zero_grad()
        a_loss.backward()
        self.a_opt.step()
        return c_loss.item(), a_loss.item()


def run():
    torch.manual_seed(0)
    agent = DiscreteDDPG()
    s, s2 = torch.randn(32, 6), torch.randn(32, 6)
    a, r = torch.randint(0, 4, (32,)), torch.randn(32)
    losses = agent.update(s, a, r, s2)
    return {"agent": agent, "losses": losses}
