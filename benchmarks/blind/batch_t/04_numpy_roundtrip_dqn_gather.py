"""DQN: the Q-values of the taken actions are picked out in numpy, then wrapped back with from_numpy.
The target is computed correctly under no_grad from a target net filled by load_state_dict;
backward raises because the loss no longer requires grad. Thread: DQN element 0 does not require grad (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "numpy_roundtrip"
QUERY = None
EXPECT = "backward_error"

import numpy as np

class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 3))
    def forward(self, s):
        return self.net(s)

class Agent:
    def __init__(self):
        self.q, self.q_target = QNet(), QNet()
        self.q_target.load_state_dict(self.q.state_dict())
        self.opt = torch.optim.Adam(self.q.parameters(), 1e-3)
    def learn(self, s, a, r, s2, done):
        q_all = self.q(s).detach().cpu().numpy()  # <-- CUT
        q_sa = torch.from_numpy(q_all[np.arange(len(a)), a])
        with torch.no_grad():
            tgt = r + 0.99 * (1 - done) * self.q_target(s2).max(1).values
        loss = F.smooth_l1_loss(q_sa, tgt)
        self.opt.zero_grad(); loss.backward(); self.opt.step()

def run():
    torch.manual_seed(0)
    agent = Agent()
    s, s2 = torch.randn(8, 4), torch.randn(8, 4)
    a = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    agent.learn(s, a, torch.randn(8), s2, torch.zeros(8))
    return {"agent": agent}
