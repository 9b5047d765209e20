"""PPO: the value loss is computed against returns built in numpy from the value head's own
output, then re-tensorized; the policy loss trains the actor, the critic gets no grad.
Thread: vwxyzjn/cleanrl GAE / value loss questions (reconstructed from memory)."""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.critic.weight"
EXPECT = "grad_none"


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Linear(4, 2)
        self.critic = nn.Linear(4, 1)


def compute_value_error(values, returns):
    v = values.detach().cpu().numpy()  # <-- CUT
    return torch.from_numpy((v - returns) ** 2).float()


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    agent = Agent()
    obs = torch.randn(8, 4)
    returns = rng.standard_normal((8, 1)).astype(np.float32)
    logp = torch.log_softmax(agent.actor(obs), -1)[:, 0]
    adv = torch.randn(8)
    pg_loss = -(logp * adv).mean()
    v_loss = compute_value_error(agent.critic(obs), returns).mean()
    loss = pg_loss + 0.5 * v_loss
    loss.backward()
    return {"agent": agent}
