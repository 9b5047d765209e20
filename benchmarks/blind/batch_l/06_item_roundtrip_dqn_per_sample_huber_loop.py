"""DQN with prioritized replay. The TD errors are turned into floats with .item() for
the priority update (correct), and the same floats are reused in a per-sample Python
Huber loop; the result is re-wrapped with requires_grad=True so backward runs. The
target network is synced by load_state_dict and evaluated under no_grad (correct).
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.q.net[0].weight"
EXPECT = "grad_none"


class QNet(nn.Module):
    def __init__(self, n_obs=8, n_act=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_obs, 64), nn.ReLU(), nn.Linear(64, n_act))

    def forward(self, s):
        return self.net(s)


def huber(x, delta=1.0):
    return 0.5 * x * x if abs(x) <= delta else delta * (abs(x) - 0.5 * delta)


class Agent:
    def __init__(self, gamma=0.99):
        self.q, self.q_target = QNet(), QNet()
        self.q_target.load_state_dict(self.q.state_dict())
        self.opt = torch.optim.RMSprop(self.q.parameters(), lr=1e-4)
        self.gamma = gamma
        self.priorities = {}

    def learn(self, batch, idx, is_weights):
        s, a, r, s2, done = batch
        q_sa = self.q(s).gather(1, a.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            y = r + self.gamma * (1 - done) * self.q_target(s2).max(1).values
        losses = []
        for i in range(len(idx)):
            td = q_sa[i].item() - y[i].item()  # <-- CUT
            self.priorities[int(idx[i])] = abs(td) + 1e-6
            losses.append(is_weights[i].item() * huber(td))
        loss = torch.tensor(sum(losses) / len(losses), requires_grad=True)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    agent = Agent()
    B = 16
    batch = (torch.randn(B, 8), torch.randint(0, 4, (B,)), torch.randn(B),
             torch.randn(B, 8), (torch.rand(B) < 0.1).float())
    idx = torch.randperm(100)[:B]
    is_weights = torch.rand(B)
    loss = agent.learn(batch, idx, is_weights)
    return {"agent": agent, "loss": loss}
