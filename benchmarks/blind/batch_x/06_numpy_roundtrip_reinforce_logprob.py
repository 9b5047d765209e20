"""REINFORCE with a baseline: discounted returns are computed in numpy (fine, they are
data), but the chosen-action log-probs also go through numpy in select_action; the
value baseline trains while the policy network gets no gradient.
Thread: Quantum-Cheese/DeepReinforcementLearning_Pytorch#1 (log_probs lose gradient)."""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.fc1.weight"
EXPECT = "grad_none"


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 24)
        self.fc2 = nn.Linear(24, 2)

    def forward(self, x):
        return torch.softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)


def discount(rewards, gamma):
    out, running = np.zeros(len(rewards), dtype=np.float32), 0.0
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * running
        out[t] = running
    return out


def select_action(policy, state, rng):
    probs = policy(state)
    p = probs.detach().numpy()  # <-- CUT
    action = rng.choice(2, p=p / p.sum())
    return action, torch.from_numpy(np.log(p[action:action + 1]))


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    policy, baseline = Policy(), nn.Linear(4, 1)
    opt = torch.optim.Adam(list(policy.parameters()) + list(baseline.parameters()), lr=1e-2)
    states = torch.randn(6, 4)
    log_probs, values, rewards = [], [], []
    for t in range(6):
        _, lp = select_action(policy, states[t], rng)
        log_probs.append(lp)
        values.append(baseline(states[t]))
        rewards.append(float(rng.normal()))
    returns = torch.from_numpy(discount(rewards, 0.99))
    values = torch.cat(values)
    adv = returns - values.detach()
    loss = -(torch.cat(log_probs) * adv).sum() + (returns - values).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"policy": policy, "baseline": baseline}
