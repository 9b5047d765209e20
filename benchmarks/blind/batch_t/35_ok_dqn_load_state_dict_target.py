"""Control: DQN with a target net hard-copied by load_state_dict, the TD target under no_grad,
max over target Q (non-differentiable, but on the target side) and .item() logging. Online net trains.
Thread: none (control shaped like CleanRL-style DQN)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "ok"
QUERY = 'agent.q[0].weight'
EXPECT = "grad_ok"

class Agent:
    def __init__(self):
        self.q = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
        self.q_t = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
        self.q_t.load_state_dict(self.q.state_dict())
        self.q_t.eval()
        self.opt = torch.optim.Adam(self.q.parameters(), 1e-3)
        self.log = []
    def learn(self, s, a, r, s2, d):
        with torch.no_grad():
            y = r + 0.99 * (1 - d) * self.q_t(s2).max(1).values
        q = self.q(s).gather(1, a[:, None]).squeeze(1)
        loss = F.smooth_l1_loss(q, y)  # <-- CUT
        self.opt.zero_grad(); loss.backward(); self.opt.step()
        self.log.append(loss.item())

def run():
    torch.manual_seed(0)
    agent = Agent()
    agent.learn(torch.randn(8, 4), torch.randint(0, 2, (8,)), torch.randn(8), torch.randn(8, 4), torch.zeros(8))
    agent.q_t.load_state_dict(agent.q.state_dict())
    return {"agent": agent}
