"""Control: Double DQN update. The target network is refreshed with
load_state_dict, the bootstrap target is computed under torch.no_grad() with the
online argmax picking the action, and the TD error is logged with .item(). The
online network is trained by the Huber loss: online.net[0].weight.grad is nonzero.
Thread: SO, DQN target network with load_state_dict (pattern; thread not located).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "online.net[0].weight"
EXPECT = "grad_ok"


class QNet(nn.Module):
    def __init__(self, n_obs=6, n_act=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_obs, 32), nn.ReLU(), nn.Linear(32, n_act))

    def forward(self, s):
        return self.net(s)


class DoubleDQNAgent:
    def __init__(self, gamma=0.99, sync_every=2):
        self.online, self.target = QNet(), QNet()
        self.target.load_state_dict(self.online.state_dict())
        self.target.eval()
        self.opt = torch.optim.Adam(self.online.parameters(), lr=1e-3)
        self.gamma, self.sync_every, self.updates = gamma, sync_every, 0
        self.td_log = []

    def update(self, s, a, r, s2, done):
        q = self.online(s).gather(1, a.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            a2 = self.online(s2).argmax(1, keepdim=True)
            q2 = self.target(s2).gather(1, a2).squeeze(1)
            y = r + self.gamma * (1 - done) * q2
        loss = F.smooth_l1_loss(q, y)  # <-- CUT
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.updates += 1
        if self.updates % self.sync_every == 0:
            self.target.load_state_dict(self.online.state_dict())
        self.td_log.append((q - y).abs().mean().item())
        return loss


def run():
    torch.manual_seed(0)
    agent = DoubleDQNAgent()
    s, s2 = torch.randn(16, 6), torch.randn(16, 6)
    a = torch.randint(0, 3, (16,))
    r = torch.randn(16)
    done = (torch.rand(16) < 0.2).float()
    loss = agent.update(s, a, r, s2, done)
    return {"agent": agent, "online": agent.online, "target": agent.target, "loss": loss}
