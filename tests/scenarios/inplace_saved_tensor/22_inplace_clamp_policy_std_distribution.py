"""Gaussian policy (REINFORCE) built from torch.distributions.Normal. The std
comes from log_std.exp() and is then floored in place with std.clamp_(min=1e-3)
for numerical safety; exp saved its output for backward, so loss.backward()
raises: a variable needed for gradient computation was modified in place.
"""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.log_std"
EXPECT = "backward_error"


class GaussianPolicy(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.mu = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh(), nn.Linear(16, act_dim))
        self.log_std = nn.Parameter(torch.full((act_dim,), -0.5))

    def forward(self, obs):
        std = self.log_std.exp()
        std.clamp_(min=1e-3)  # <-- CUT
        return torch.distributions.Normal(self.mu(obs), std)


def run():
    torch.manual_seed(0)
    policy = GaussianPolicy(5, 2)
    opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
    obs = torch.randn(10, 5)
    dist = policy(obs)
    actions = dist.sample()
    returns = torch.randn(10)
    loss = -(dist.log_prob(actions).sum(-1) * returns).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"policy": policy, "opt": opt, "loss": loss}
