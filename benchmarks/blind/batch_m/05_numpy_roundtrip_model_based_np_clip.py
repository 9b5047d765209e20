"""Model-based RL: the policy is optimised by rolling out a learned dynamics model
that is frozen on purpose for this phase. Actions are clipped to the env bounds
with np.clip, so each imagined action goes through numpy; the imagined return has
no grad_fn and backward raises "element 0 of tensors does not require grad".
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Dynamics(nn.Module):
    def __init__(self, obs=4, act=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs + act, 64), nn.Tanh(), nn.Linear(64, obs))

    def forward(self, s, a):
        return s + self.net(torch.cat([s, a], dim=-1))


class Policy(nn.Module):
    def __init__(self, obs=4, act=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs, 64), nn.Tanh(), nn.Linear(64, act))

    def forward(self, s):
        return self.net(s)


def reward_fn(s, a):
    return -(s ** 2).sum(-1) - 0.01 * (a ** 2).sum(-1)


class Dreamer:
    def __init__(self, horizon=5, a_low=-1.0, a_high=1.0):
        self.model, self.policy = Dynamics(), Policy()
        self.p_opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.horizon, self.a_low, self.a_high = horizon, a_low, a_high

    def imagine(self, s):
        ret = 0.0
        for _ in range(self.horizon):
            a = self.policy(s)
            a = torch.from_numpy(np.clip(a.detach().numpy(), self.a_low, self.a_high))  # <-- CUT
            s = self.model(s, a)
            ret = ret + reward_fn(s, a)
        return ret.mean()

    def policy_step(self, s0):
        self.model.requires_grad_(False)
        loss = -self.imagine(s0)
        self.p_opt.zero_grad()
        loss.backward()
        self.p_opt.step()
        self.model.requires_grad_(True)
        return loss.item()


def run():
    torch.manual_seed(0)
    agent = Dreamer()
    loss = agent.policy_step(torch.randn(32, 4))
    return {"agent": agent, "loss": loss}
