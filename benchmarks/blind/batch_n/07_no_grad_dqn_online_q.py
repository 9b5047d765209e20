"""DQN agent: the whole TD computation is wrapped in torch.no_grad() (target AND online Q),
so the loss only reaches the auxiliary head. Thread: cleanrl/rl-baselines DQN loss "no grad"
reports (reconstructed from memory)."""
import torch
import torch.nn as nn

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "q_net[0].weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    q_net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    target_net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    target_net.load_state_dict(q_net.state_dict())
    aux = nn.Linear(4, 1)
    obs, nxt = torch.randn(8, 4), torch.randn(8, 4)
    act = torch.randint(0, 2, (8,))
    rew = torch.randn(8)
    with torch.no_grad():
        target_max = target_net(nxt).max(dim=1).values
        td_target = rew + 0.99 * target_max
        old_val = q_net(obs).gather(1, act[:, None]).squeeze(1)  # <-- CUT
    loss = ((td_target - old_val) ** 2).mean() + aux(obs).pow(2).mean()
    loss.backward()
    return {"q_net": q_net}
