"""SAC temperature tuning: alpha is turned into a Python float with .item() (meant
only for the actor loss), and the same float is reused in the alpha loss, so
log_alpha never receives a gradient; the actor still trains.
Thread (from memory): discuss.pytorch.org 'SAC log_alpha not updating, grad None'."""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "sac.log_alpha"
EXPECT = "grad_none"


class SAC:
    def __init__(self, obs_dim=3, act_dim=1):
        self.actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, 2 * act_dim))
        self.q1 = nn.Sequential(nn.Linear(obs_dim + act_dim, 32), nn.ReLU(), nn.Linear(32, 1))
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.target_entropy = -float(act_dim)
        self.opt = torch.optim.Adam(list(self.actor.parameters()) + [self.log_alpha], lr=3e-4)

    def sample(self, s):
        mu, log_std = self.actor(s).chunk(2, -1)
        std = log_std.clamp(-5, 2).exp()
        u = mu + std * torch.randn_like(mu)
        a = torch.tanh(u)
        logp = (torch.distributions.Normal(mu, std).log_prob(u) - torch.log(1 - a.pow(2) + 1e-6)).sum(-1)
        return a, logp

    def update(self, s):
        a, logp = self.sample(s)
        alpha = self.log_alpha.exp().item()  # <-- CUT
        actor_loss = (alpha * logp - self.q1(torch.cat([s, a], -1)).squeeze(-1)).mean()
        alpha_loss = -(alpha * (logp + self.target_entropy).detach()).mean()
        self.opt.zero_grad()
        (actor_loss + alpha_loss).backward()
        self.opt.step()
        return actor_loss.item()


def run():
    torch.manual_seed(0)
    sac = SAC()
    sac.q1.requires_grad_(False)
    loss = sac.update(torch.randn(16, 3))
    return {"sac": sac, "loss": loss}
