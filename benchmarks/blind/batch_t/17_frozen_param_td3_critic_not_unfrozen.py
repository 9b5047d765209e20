"""TD3: the critics are frozen with requires_grad_(False) for the delayed actor update and never
unfrozen, so the next critic update raises. Target nets via polyak under no_grad are correct.
Thread: TD3 critic loss does not require grad on second iteration (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "frozen_param"
QUERY = None
EXPECT = "backward_error"

class TD3:
    def __init__(self):
        self.actor = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1), nn.Tanh())
        self.q1 = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
        self.q2 = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
        self.targets = [nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1)) for _ in range(2)]
        self.actor_t = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1), nn.Tanh())
        self.actor_t.load_state_dict(self.actor.state_dict())
        for t, q in zip(self.targets, (self.q1, self.q2)):
            t.load_state_dict(q.state_dict())
        self.c_opt = torch.optim.Adam(list(self.q1.parameters()) + list(self.q2.parameters()), 1e-3)
        self.a_opt = torch.optim.Adam(self.actor.parameters(), 1e-3)
    def train_step(self, it, s, a, r, s2):
        with torch.no_grad():
            a2 = (self.actor_t(s2) + 0.1 * torch.randn_like(a)).clamp(-1, 1)
            sa2 = torch.cat([s2, a2], -1)
            y = r + 0.99 * torch.min(self.targets[0](sa2), self.targets[1](sa2))
        sa = torch.cat([s, a], -1)
        c_loss = F.mse_loss(self.q1(sa), y) + F.mse_loss(self.q2(sa), y)
        self.c_opt.zero_grad(); c_loss.backward(); self.c_opt.step()
        if it % 2 == 0:
            for p in list(self.q1.parameters()) + list(self.q2.parameters()):
                p.requires_grad_(False)  # <-- CUT
            a_loss = -self.q1(torch.cat([s, self.actor(s)], -1)).mean()
            self.a_opt.zero_grad(); a_loss.backward(); self.a_opt.step()
            with torch.no_grad():
                for p, pt in zip(self.actor.parameters(), self.actor_t.parameters()):
                    pt.mul_(0.995).add_(0.005 * p)

def run():
    torch.manual_seed(0)
    agent = TD3()
    for it in range(2):
        agent.train_step(it, torch.randn(8, 3), torch.rand(8, 1), torch.randn(8, 1), torch.randn(8, 3))
    return {"agent": agent}
