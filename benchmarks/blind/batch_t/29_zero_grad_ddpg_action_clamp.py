"""DDPG actor scaled by max_action and then clamped to the env bounds; the last-layer bias init
pushes every pre-clamp action past the bound, so the actor gradient is exactly zero. Target copy is fine.
Thread: DDPG actor gradients all zero (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "zero_gradient"
QUERY = 'actor.net[0].weight'
EXPECT = "grad_zero"

class Actor(nn.Module):
    def __init__(self, max_action=2.0):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
        nn.init.constant_(self.net[2].bias, 3.0)
        nn.init.uniform_(self.net[2].weight, -3e-3, 3e-3)
        self.max_action = max_action
    def forward(self, s, low=-1.0, high=1.0):
        raw = self.net(s) * self.max_action
        return raw.clamp(low, high)  # <-- CUT

def run():
    torch.manual_seed(0)
    actor, actor_t = Actor(), Actor()
    actor_t.load_state_dict(actor.state_dict())
    critic = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.Adam(actor.parameters(), 1e-4)
    s = torch.randn(8, 3)
    loss = -critic(torch.cat([s, actor(s)], -1)).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    return {"actor": actor}
