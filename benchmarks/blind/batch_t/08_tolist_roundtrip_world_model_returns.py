"""Dreamer-like world model: predicted rewards are turned into a list to compute discounted returns
in a Python loop and rebuilt with torch.tensor; the reward head gets no gradient from the value target.
Thread: imagined returns do not backprop to reward model (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "tolist_roundtrip"
QUERY = 'wm.reward_head.weight'
EXPECT = "grad_none"

class WorldModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.dyn = nn.GRUCell(2, 16)
        self.reward_head = nn.Linear(16, 1)
    def imagine(self, h, actions):
        rs = []
        for a in actions:
            h = self.dyn(a, h)
            rs.append(self.reward_head(h).squeeze(-1))
        return torch.stack(rs)

def discounted(rewards, gamma=0.9):
    rows = rewards.tolist()  # <-- CUT
    out, run_ = [], [0.0] * len(rows[0])
    for r in reversed(rows):
        run_ = [ri + gamma * g for ri, g in zip(r, run_)]
        out.append(run_)
    return torch.tensor(list(reversed(out)))

def run():
    torch.manual_seed(0)
    wm = WorldModel()
    critic = nn.Linear(16, 1)
    target_critic = nn.Linear(16, 1)
    target_critic.load_state_dict(critic.state_dict())
    h0 = torch.randn(4, 16)
    acts = [torch.randn(4, 2) for _ in range(5)]
    rets = discounted(wm.imagine(h0, acts))
    with torch.no_grad():
        boot = target_critic(h0).squeeze(-1)
    loss = F.mse_loss(critic(h0).squeeze(-1), rets[0] + 0.5 * boot)
    loss.backward()
    return {"wm": wm, "critic": critic}
