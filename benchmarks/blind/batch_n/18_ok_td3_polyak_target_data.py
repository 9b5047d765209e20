"""Control: TD3 critic update with a no_grad target from target nets, then a polyak update
through .data, plus .item() logging. The critic's gradient is fine.
Thread: sfujim/TD3 / SB3 polyak_update style (reconstructed from memory)."""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "critic[0].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    critic = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
    critic_t = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
    critic_t.load_state_dict(critic.state_dict())
    actor_t = nn.Linear(3, 2)
    obs, act, rew, nxt = torch.randn(6, 3), torch.randn(6, 2), torch.randn(6, 1), torch.randn(6, 3)
    with torch.no_grad():
        na = torch.tanh(actor_t(nxt))
        y = rew + 0.99 * critic_t(torch.cat([nxt, na], -1))
    loss = ((critic(torch.cat([obs, act], -1)) - y) ** 2).mean()  # <-- CUT
    loss.backward()
    log = {"critic_loss": loss.item()}
    with torch.no_grad():
        for p, tp in zip(critic.parameters(), critic_t.parameters()):
            tp.data.mul_(0.995).add_(0.005 * p.data)
    return {"critic": critic, "log": log}
