"""A VAE-style policy samples its latent action with dist.sample() instead of
dist.rsample(). sample() draws without the reparameterisation trick, so the
mean/log-std head gets no gradient from the downstream loss.
"""
import torch
import torch.nn as nn
from torch.distributions import Normal

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.mu.weight"
EXPECT = "grad_none"


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(4, 2)
        self.log_std = nn.Parameter(torch.zeros(2))

    def forward(self, s):
        return Normal(self.mu(s), self.log_std.exp())


def run():
    torch.manual_seed(0)
    policy = Policy()
    critic = nn.Linear(4 + 2, 1)
    s = torch.randn(8, 4)
    a = policy(s).sample()  # <-- CUT
    loss = -critic(torch.cat([s, a], dim=1)).mean()
    loss.backward()
    return {"policy": policy, "critic": critic, "loss": loss}
