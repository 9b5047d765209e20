"""REINFORCE agent that stores np.log of the action probabilities in its episode buffer
(after .numpy() on a grad tensor raised, the user added .detach()). The loss is built from the
numpy log-probs and numpy returns, so loss.backward() raises "element 0 ... does not require grad".
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Policy(nn.Module):
    def __init__(self, obs_dim=4, n_act=2):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, n_act), nn.Softmax(dim=-1))

    def forward(self, s):
        return self.fc(s)


class ReinforceAgent:
    def __init__(self, gamma=0.99):
        self.policy = Policy()
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=1e-2)
        self.gamma = gamma
        self.log_probs, self.rewards = [], []

    def act(self, state, rng):
        probs = self.policy(torch.from_numpy(state).float())
        p = probs.detach().numpy()
        a = int(rng.choice(len(p), p=p / p.sum()))
        self.log_probs.append(np.log(probs.detach().numpy()[a]))  # <-- CUT
        return a

    def finish_episode(self):
        R, rets = 0.0, []
        for r in reversed(self.rewards):
            R = r + self.gamma * R
            rets.insert(0, R)
        rets = np.array(rets, dtype=np.float32)
        rets = (rets - rets.mean()) / (rets.std() + 1e-8)
        loss = torch.from_numpy(-np.array(self.log_probs, dtype=np.float32) * rets).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.log_probs, self.rewards = [], []
        return loss.item()


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    agent = ReinforceAgent()
    state = rng.normal(size=4).astype(np.float32)
    for t in range(8):
        a = agent.act(state, rng)
        state = (state + 0.1 * (a - 0.5)).astype(np.float32)
        agent.rewards.append(1.0 if abs(state[0]) < 1 else 0.0)
    loss = agent.finish_episode()
    return {"agent": agent, "loss": loss}
