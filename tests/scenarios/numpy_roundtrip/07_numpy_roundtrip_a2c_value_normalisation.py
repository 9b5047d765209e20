"""A2C with a shared trunk: returns AND value predictions are standardised with a
numpy helper (PopArt-lite), so the critic head is trained on values rebuilt by
`torch.from_numpy`: the critic gets no gradient while the actor still trains.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.critic.weight"
EXPECT = "grad_none"


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 32), nn.Tanh())
        self.actor = nn.Linear(32, 2)
        self.critic = nn.Linear(32, 1)

    def forward(self, obs):
        h = self.trunk(obs)
        return self.actor(h), self.critic(h).squeeze(-1)


def standardise(x):
    arr = x.detach().cpu().numpy() if torch.is_tensor(x) else np.asarray(x)  # <-- CUT
    return torch.from_numpy((arr - arr.mean()) / (arr.std() + 1e-8)).float()


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = ActorCritic()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    obs = torch.randn(16, 4)
    rewards = rng.normal(size=16)
    returns = np.cumsum(rewards[::-1])[::-1].copy()
    logits, values = model(obs)
    dist = torch.distributions.Categorical(logits=logits)
    actions = dist.sample()
    ret_n, val_n = standardise(returns), standardise(values)
    adv = ret_n - val_n
    actor_loss = -(dist.log_prob(actions) * adv).mean()
    critic_loss = F.mse_loss(val_n, ret_n)
    loss = actor_loss + 0.5 * critic_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
