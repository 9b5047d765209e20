"""DQN agent whose learn() reuses the epsilon-greedy helper's q_values(), which runs under
torch.no_grad() because it was written for acting. The target side is also (correctly) under
no_grad, so the TD loss has no grad_fn and loss.backward() raises "element 0 ... does not require grad".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class QNetwork(nn.Module):
    def __init__(self, obs_dim=8, n_act=4):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                    nn.Linear(64, n_act))

    def forward(self, s):
        return self.layers(s)


class DQNAgent:
    def __init__(self, cfg):
        self.cfg = cfg
        self.qnet, self.target = QNetwork(), QNetwork()
        self.target.load_state_dict(self.qnet.state_dict())
        self.opt = torch.optim.Adam(self.qnet.parameters(), lr=cfg["lr"])

    def q_values(self, states):
        with torch.no_grad():
            return self.qnet(states)  # <-- CUT

    def act(self, state, eps):
        if torch.rand(()) < eps:
            return int(torch.randint(0, 4, ()))
        return int(self.q_values(state.unsqueeze(0)).argmax())

    def learn(self, batch):
        s, a, r, s2, done = batch
        q = self.q_values(s).gather(1, a.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            q_next = self.target(s2).max(1).values
            y = r + self.cfg["gamma"] * (1 - done) * q_next
        loss = F.mse_loss(q, y)
        self.opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.qnet.parameters(), 10.0)
        self.opt.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    agent = DQNAgent({"lr": 5e-4, "gamma": 0.99})
    a0 = agent.act(torch.randn(8), eps=0.1)
    batch = (torch.randn(32, 8), torch.randint(0, 4, (32,)), torch.randn(32), torch.randn(32, 8),
             (torch.rand(32) < 0.05).float())
    loss = agent.learn(batch)
    return {"agent": agent, "loss": loss, "a0": a0}
