"""DQN whose TD target is computed from the target network *without* no_grad or
detach, and the periodic `target.load_state_dict(online.state_dict())` sync was
placed between the forward and the backward: the copy overwrites target weights
saved for backward, so `loss.backward()` raises.
"""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    online = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
    target = copy.deepcopy(online)
    opt = torch.optim.Adam(online.parameters(), lr=1e-3)
    obs, next_obs = torch.randn(16, 4), torch.randn(16, 4)
    actions = torch.randint(0, 2, (16,), dtype=torch.int64)
    rewards, dones = torch.randn(16), torch.zeros(16)
    step, sync_every = 1000, 1000
    q = online(obs).gather(1, actions[:, None]).squeeze(1)
    q_next = target(next_obs).max(1).values
    td_target = rewards + 0.99 * (1 - dones) * q_next
    if step % sync_every == 0:
        target.load_state_dict(online.state_dict())  # <-- CUT
    loss = F.smooth_l1_loss(q, td_target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"online": online, "loss": loss}
