"""REINFORCE on a bandit: the action is sampled with `np.random.choice` from the
policy's probabilities, and the log-probability for the policy-gradient loss is
then taken from that NumPy array, so the policy network never gets a gradient.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy[0].weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3), nn.Softmax(-1))
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    log_probs, rewards = [], []
    for t in range(5):
        state = torch.randn(4)
        probs = policy(state).detach().numpy()  # <-- CUT
        action = rng.choice(3, p=probs / probs.sum())
        log_probs.append(torch.log(torch.from_numpy(probs)[action]).requires_grad_())
        rewards.append(float(action == 1))
    returns = torch.tensor(rewards)
    loss = -(torch.stack(log_probs) * (returns - returns.mean())).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"policy": policy, "opt": opt, "loss": loss}
