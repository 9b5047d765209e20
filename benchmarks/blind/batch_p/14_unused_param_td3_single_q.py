"""TD3 critic with twin Q-heads. A single_q flag, added to debug the critic, is
left on in the config, so the critic returns q1 twice and the second head is never
used: critic.q2 gets no gradient while q1 trains. The target is computed under
no_grad from target networks filled by load_state_dict (legitimate cuts).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "critic.q2[0].weight"
EXPECT = "grad_none"

CFG = {"gamma": 0.99, "policy_noise": 0.2, "noise_clip": 0.5, "single_q": True}


def mlp(i, o):
    return nn.Sequential(nn.Linear(i, 32), nn.ReLU(), nn.Linear(32, o))


class Actor(nn.Module):
    def __init__(self, s, a):
        super().__init__()
        self.net = mlp(s, a)

    def forward(self, s):
        return torch.tanh(self.net(s))


class TwinCritic(nn.Module):
    def __init__(self, s, a, single_q=False):
        super().__init__()
        self.q1, self.q2, self.single_q = mlp(s + a, 1), mlp(s + a, 1), single_q

    def forward(self, s, a):
        sa = torch.cat([s, a], dim=-1)
        q1 = self.q1(sa)
        if self.single_q:
            return q1, q1  # <-- CUT
        return q1, self.q2(sa)


def run():
    torch.manual_seed(0)
    actor, critic = Actor(6, 2), TwinCritic(6, 2, CFG["single_q"])
    actor_t, critic_t = Actor(6, 2), TwinCritic(6, 2, CFG["single_q"])
    actor_t.load_state_dict(actor.state_dict())
    critic_t.load_state_dict(critic.state_dict())
    critic_opt = torch.optim.Adam(critic.parameters(), lr=3e-4)
    s, a, r, s2 = torch.randn(32, 6), torch.rand(32, 2) * 2 - 1, torch.randn(32, 1), torch.randn(32, 6)
    done = torch.zeros(32, 1)
    with torch.no_grad():
        noise = (torch.randn(32, 2) * CFG["policy_noise"]).clamp(-CFG["noise_clip"], CFG["noise_clip"])
        a2 = (actor_t(s2) + noise).clamp(-1, 1)
        tq1, tq2 = critic_t(s2, a2)
        y = r + CFG["gamma"] * (1 - done) * torch.min(tq1, tq2)
    q1, q2 = critic(s, a)
    critic_loss = F.mse_loss(q1, y) + F.mse_loss(q2, y)
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
    return {"critic": critic, "actor": actor, "critic_loss": critic_loss}
