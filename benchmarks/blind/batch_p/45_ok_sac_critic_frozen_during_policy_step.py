"""Control: SAC update that freezes the Q-networks with requires_grad = False for
the policy step and unfreezes them afterwards (the correct version), with a
no_grad target from target nets filled by load_state_dict, a Polyak update through
.data and .item() logging. The actor's gradient is normal.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "actor.mu.weight"
EXPECT = "grad_ok"


def mlp(i, o):
    return nn.Sequential(nn.Linear(i, 32), nn.ReLU(), nn.Linear(32, o))


class Actor(nn.Module):
    def __init__(self, s=5, a=2):
        super().__init__()
        self.body, self.mu, self.log_std = mlp(s, 32), nn.Linear(32, a), nn.Linear(32, a)

    def forward(self, s):
        h = F.relu(self.body(s))
        mu, std = self.mu(h), self.log_std(h).clamp(-5, 2).exp()
        u = mu + std * torch.randn_like(mu)
        a = torch.tanh(u)
        logp = (-0.5 * ((u - mu) / std) ** 2 - std.log()).sum(-1) - torch.log(1 - a.pow(2) + 1e-6).sum(-1)
        return a, logp


def run():
    torch.manual_seed(0)
    actor = Actor()
    q1, q2 = mlp(7, 1), mlp(7, 1)
    q1_t, q2_t = mlp(7, 1), mlp(7, 1)
    q1_t.load_state_dict(q1.state_dict())
    q2_t.load_state_dict(q2.state_dict())
    q_params = list(q1.parameters()) + list(q2.parameters())
    q_opt, pi_opt = torch.optim.Adam(q_params, lr=3e-4), torch.optim.Adam(actor.parameters(), lr=3e-4)
    s, a, r, s2 = torch.randn(16, 5), torch.rand(16, 2) * 2 - 1, torch.randn(16), torch.randn(16, 5)
    with torch.no_grad():
        a2, logp2 = actor(s2)
        sa2 = torch.cat([s2, a2], -1)
        y = r + 0.99 * (torch.min(q1_t(sa2), q2_t(sa2)).squeeze(-1) - 0.2 * logp2)
    sa = torch.cat([s, a], -1)
    q_loss = F.mse_loss(q1(sa).squeeze(-1), y) + F.mse_loss(q2(sa).squeeze(-1), y)
    q_opt.zero_grad()
    q_loss.backward()
    q_opt.step()
    for p in q_params:
        p.requires_grad = False
    a_pi, logp = actor(s)
    sa_pi = torch.cat([s, a_pi], -1)
    pi_loss = (0.2 * logp - torch.min(q1(sa_pi), q2(sa_pi)).squeeze(-1)).mean()  # <-- CUT
    pi_opt.zero_grad()
    pi_loss.backward()
    pi_opt.step()
    for p in q_params:
        p.requires_grad = True
    with torch.no_grad():
        for net, tgt in ((q1, q1_t), (q2, q2_t)):
            for p, tp in zip(net.parameters(), tgt.parameters()):
                tp.data.mul_(0.995).add_(0.005 * p.data)
    log = {"q_loss": q_loss.item(), "pi_loss": pi_loss.item()}
    return {"actor": actor, "q1": q1, "log": log}
