"""Control: PPO update with rewards normalised in numpy (no grad involved), actions
gathered with int64 indices, old log-probs computed under no_grad, and the
tensor returned by `clip_grad_norm_` only logged with `.item()`.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy[0].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 3))
    opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
    obs = torch.randn(32, 4)
    actions = torch.from_numpy(rng.integers(0, 3, size=32)).long()
    rewards = rng.normal(size=32)
    adv = torch.from_numpy((rewards - rewards.mean()) / (rewards.std() + 1e-8)).float()
    with torch.no_grad():
        old_logp = policy(obs).log_softmax(-1).gather(1, actions[:, None]).squeeze(1)
    logp = policy(obs).log_softmax(-1).gather(1, actions[:, None]).squeeze(1)
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 0.8, 1.2)
    loss = -torch.min(ratio * adv, clipped * adv).mean()  # <-- CUT
    opt.zero_grad()
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
    stats = {"loss": loss.item(), "grad_norm": grad_norm.item()}
    opt.step()
    return {"policy": policy, "stats": stats}
