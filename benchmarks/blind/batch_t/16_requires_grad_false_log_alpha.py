"""SAC temperature created with torch.zeros(1) and handed to its own Adam optimizer; it was meant
to be learnable but has no requires_grad, so alpha never changes. Target critic copy is fine.
Thread: SAC alpha optimizer does nothing (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "requires_grad_false"
QUERY = 'agent.log_alpha'
EXPECT = "grad_none"

class Agent:
    def __init__(self):
        self.pi = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 2))
        self.q = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
        self.q_targ = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
        self.q_targ.load_state_dict(self.q.state_dict())
        self.log_alpha = torch.zeros(1)  # <-- CUT
        self.pi_opt = torch.optim.Adam(self.pi.parameters(), 3e-4)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], 3e-4)
    def update(self, s):
        mu, ls = self.pi(s).chunk(2, -1)
        u = mu + ls.exp() * torch.randn_like(mu)
        logp = (-0.5 * ((u - mu) / ls.exp()) ** 2 - ls).sum(-1)
        a = torch.tanh(u)
        pi_loss = (self.log_alpha.exp() * logp - self.q(torch.cat([s, a], -1)).squeeze(-1)).mean()
        alpha_loss = -(self.log_alpha * (logp.detach() - 1.0)).mean()
        self.pi_opt.zero_grad(); self.alpha_opt.zero_grad()
        (pi_loss + alpha_loss).backward()
        self.pi_opt.step(); self.alpha_opt.step()

def run():
    torch.manual_seed(0)
    agent = Agent()
    agent.update(torch.randn(16, 3))
    return {"agent": agent}
