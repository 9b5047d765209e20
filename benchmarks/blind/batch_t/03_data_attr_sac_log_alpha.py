"""SAC temperature loss written with log_alpha.data, so the entropy coefficient never adapts.
Polyak updates of the target critics through .data sit right next to it and are correct.
Thread: SAC alpha stays constant / log_alpha grad None (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "data_attr"
QUERY = 'sac.log_alpha'
EXPECT = "grad_none"

class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 16)
        self.mu, self.log_std = nn.Linear(16, 1), nn.Linear(16, 1)
    def forward(self, s):
        h = torch.relu(self.body(s))
        mu, std = self.mu(h), self.log_std(h).clamp(-5, 2).exp()
        u = mu + std * torch.randn_like(mu)
        logp = (-0.5 * ((u - mu) / std) ** 2 - std.log()).sum(-1) - torch.log(1 - torch.tanh(u) ** 2 + 1e-6).sum(-1)
        return torch.tanh(u), logp

class SAC:
    def __init__(self):
        self.pi = Policy()
        self.q, self.q_t = nn.Linear(4, 1), nn.Linear(4, 1)
        self.q_t.load_state_dict(self.q.state_dict())
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.target_entropy = -1.0
        self.pi_opt = torch.optim.Adam(self.pi.parameters(), 3e-4)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], 3e-4)
    def update(self, s):
        a, logp = self.pi(s)
        alpha = self.log_alpha.exp().detach()
        pi_loss = (alpha * logp - self.q(torch.cat([s, a], -1)).squeeze(-1)).mean()
        alpha_loss = -(self.log_alpha.data * (logp + self.target_entropy).detach()).mean()  # <-- CUT
        self.pi_opt.zero_grad(); self.alpha_opt.zero_grad()
        (pi_loss + alpha_loss).backward()
        self.pi_opt.step(); self.alpha_opt.step()
        for p, pt in zip(self.q.parameters(), self.q_t.parameters()):
            pt.data.copy_(0.995 * pt.data + 0.005 * p.data)

def run():
    torch.manual_seed(0)
    sac = SAC()
    sac.update(torch.randn(16, 3))
    return {"sac": sac}
