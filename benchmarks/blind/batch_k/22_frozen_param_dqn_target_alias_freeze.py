"""DQN agent that builds its target network by assignment (self.target = self.online, a
Python alias, not a copy) and then freezes "the target" in a helper. The online network is
frozen too, so the TD loss has no grad_fn and loss.backward() raises "element 0 ... does not require grad".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class DuelingQ(nn.Module):
    def __init__(self, obs_dim=6, n_act=3):
        super().__init__()
        self.feat = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU())
        self.v, self.a = nn.Linear(64, 1), nn.Linear(64, n_act)

    def forward(self, s):
        h = self.feat(s)
        a = self.a(h)
        return self.v(h) + a - a.mean(-1, keepdim=True)


def freeze(net):
    for p in net.parameters():
        p.requires_grad = False  # <-- CUT
    net.eval()


class Agent:
    def __init__(self, gamma=0.99):
        self.online = DuelingQ()
        self.target = self.online
        freeze(self.target)
        self.opt = torch.optim.Adam(self.online.parameters(), lr=1e-3)
        self.gamma = gamma

    def sync(self):
        self.target.load_state_dict(self.online.state_dict())

    def learn(self, s, a, r, s2, d):
        q = self.online(s).gather(1, a[:, None]).squeeze(1)
        with torch.no_grad():
            a_star = self.online(s2).argmax(1, keepdim=True)
            y = r + self.gamma * (1 - d) * self.target(s2).gather(1, a_star).squeeze(1)
        loss = F.smooth_l1_loss(q, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    agent = Agent()
    agent.sync()
    s, s2 = torch.randn(32, 6), torch.randn(32, 6)
    a, r, d = torch.randint(0, 3, (32,)), torch.randn(32), torch.zeros(32)
    loss = agent.learn(s, a, r, s2, d)
    return {"agent": agent, "loss": loss}
