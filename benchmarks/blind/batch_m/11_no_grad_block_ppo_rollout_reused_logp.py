"""PPO agent: the rollout is collected under torch.no_grad() (correct for acting),
and the stored old log-probs and values are rightly constants. The update then
reuses the stored rollout outputs instead of re-evaluating the policy, so every
loss term comes from the no_grad block and backward raises "element 0 ...".
"""
import torch
import torch.nn as nn
from torch.distributions import Categorical

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class PolicyValueNet(nn.Module):
    def __init__(self, obs=6, n_act=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs, 64), nn.Tanh())
        self.pi = nn.Linear(64, n_act)
        self.v = nn.Linear(64, 1)

    def forward(self, s):
        h = self.body(s)
        return self.pi(h), self.v(h).squeeze(-1)


class PPO:
    def __init__(self, clip=0.2, epochs=2):
        self.net = PolicyValueNet()
        self.opt = torch.optim.Adam(self.net.parameters(), lr=3e-4)
        self.clip, self.epochs = clip, epochs
        self.buffer = {}

    def collect(self, states):
        with torch.no_grad():
            logits, values = self.net(states)  # <-- CUT
            dist = Categorical(logits=logits)
            actions = dist.sample()
            self.buffer = {"s": states, "a": actions, "logp": dist.log_prob(actions),
                           "old_logp": dist.log_prob(actions).clone(), "v": values}

    def update(self, returns):
        b = self.buffer
        adv = returns - b["v"]
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        for _ in range(self.epochs):
            ratio = torch.exp(b["logp"] - b["old_logp"])
            surr = torch.min(ratio * adv, ratio.clamp(1 - self.clip, 1 + self.clip) * adv)
            loss = -surr.mean() + 0.5 * ((b["v"] - returns) ** 2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()


def run():
    torch.manual_seed(0)
    agent = PPO()
    agent.collect(torch.randn(64, 6))
    agent.update(torch.randn(64))
    return {"agent": agent}
