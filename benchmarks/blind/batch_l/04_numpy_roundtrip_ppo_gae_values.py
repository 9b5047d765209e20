"""PPO update with GAE. Advantages are computed in numpy, which is fine since they are
constants. The critic's values are sent through the same numpy helper, and the value
loss is built from the returned arrays with torch.as_tensor. The clipped policy loss
trains the actor; the critic head gets no gradient.
"""
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "ac.v_head.weight"
EXPECT = "grad_none"


class ActorCritic(nn.Module):
    def __init__(self, n_obs=4, n_act=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_obs, 32), nn.Tanh())
        self.pi_head = nn.Linear(32, n_act)
        self.v_head = nn.Linear(32, 1)

    def forward(self, s):
        h = self.body(s)
        return Categorical(logits=self.pi_head(h)), self.v_head(h).squeeze(-1)


def gae(rewards, values, last_value, dones, gamma=0.99, lam=0.95):
    adv = np.zeros_like(rewards)
    last = 0.0
    for t in reversed(range(len(rewards))):
        nv = last_value if t == len(rewards) - 1 else values[t + 1]
        delta = rewards[t] + gamma * nv * (1 - dones[t]) - values[t]
        last = delta + gamma * lam * (1 - dones[t]) * last
        adv[t] = last
    return adv, adv + values


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    ac = ActorCritic()
    opt = torch.optim.Adam(ac.parameters(), lr=3e-4)
    T = 32
    obs = torch.randn(T, 4)
    with torch.no_grad():
        dist_old, _ = ac(obs)
        actions = dist_old.sample()
        old_logp = dist_old.log_prob(actions)
    rewards = rng.standard_normal(T).astype(np.float32)
    dones = (rng.random(T) < 0.05).astype(np.float32)

    dist, values = ac(obs)
    v_np = values.detach().numpy()  # <-- CUT
    adv_np, ret_np = gae(rewards, v_np, 0.0, dones)
    adv = torch.as_tensor(adv_np)
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    ratio = torch.exp(dist.log_prob(actions) - old_logp)
    pg_loss = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()
    v_loss = ((torch.as_tensor(v_np) - torch.as_tensor(ret_np)) ** 2).mean()
    loss = pg_loss + 0.5 * v_loss - 0.01 * dist.entropy().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"ac": ac, "loss": loss, "v_loss": v_loss, "pg_loss": pg_loss}
