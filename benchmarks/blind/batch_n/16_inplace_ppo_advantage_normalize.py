"""PPO update: advantages computed from the value head (not detached) are normalized in place
after being used in the ratio product, which modified a tensor saved by mul; backward raises.
Thread: cleanrl/SB3 PPO advantage normalization ports (reconstructed from memory)."""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent[0].weight"
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    agent = nn.Sequential(nn.Linear(4, 3))
    obs = torch.randn(8, 4)
    returns = torch.randn(8)
    out = agent(obs)
    logp = torch.log_softmax(out[:, :2], -1)[:, 0]
    values = out[:, 2]
    adv = returns - values
    ratio = torch.exp(logp - logp.detach())
    pg = ratio * adv
    adv -= adv.mean()  # <-- CUT
    loss = -pg.mean() + values.pow(2).mean()
    loss.backward()
    return {"agent": agent}
