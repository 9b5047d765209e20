"""Control: TD3-style update with the critic frozen for the actor loss and unfrozen afterwards,
target actor filled by load_state_dict and polyak-updated with no_grad copy_. The actor gets a gradient.
Thread: none (control shaped like the author's TD3 reference code)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "ok"
QUERY = 'actor[0].weight'
EXPECT = "grad_ok"

def run():
    torch.manual_seed(0)
    actor = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1), nn.Tanh())
    actor_t = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1), nn.Tanh())
    actor_t.load_state_dict(actor.state_dict())
    critic = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    a_opt = torch.optim.Adam(actor.parameters(), 1e-3)
    s = torch.randn(8, 3)
    critic.requires_grad_(False)
    a_loss = -critic(torch.cat([s, actor(s)], -1)).mean()  # <-- CUT
    a_opt.zero_grad(); a_loss.backward(); a_opt.step()
    critic.requires_grad_(True)
    with torch.no_grad():
        for p, pt in zip(actor.parameters(), actor_t.parameters()):
            pt.copy_(0.995 * pt + 0.005 * p)
    return {"actor": actor, "critic": critic}
