"""DDPG on a discretised action space: the actor output is rounded to the action grid before the
critic in the actor loss, so the actor's gradient is all zeros. Target nets via load_state_dict are fine.
Thread: DDPG actor gradient zero with discrete actions (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "nondifferentiable_op"
QUERY = 'actor[0].weight'
EXPECT = "grad_zero"

def run():
    torch.manual_seed(0)
    actor = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1), nn.Tanh())
    critic = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    actor_t = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1), nn.Tanh())
    actor_t.load_state_dict(actor.state_dict())
    a_opt = torch.optim.Adam(actor.parameters(), 1e-3)
    s = torch.randn(16, 5)
    n_bins = 4
    a = torch.round(actor(s) * n_bins) / n_bins  # <-- CUT
    actor_loss = -critic(torch.cat([s, a], -1)).mean()
    a_opt.zero_grad(); actor_loss.backward(); a_opt.step()
    with torch.no_grad():
        for p, pt in zip(actor.parameters(), actor_t.parameters()):
            pt.mul_(0.99).add_(0.01 * p)
    return {"actor": actor, "critic": critic}
