"""Control: PPO clipped-objective update. Old log-probs come from a rollout
under torch.no_grad(), actions are gathered with .gather, advantages are
normalized from detached values, and the approximate KL is logged with .item().
The policy network gets a normal gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.pi[0].weight"
EXPECT = "grad_ok"


class ActorCritic(nn.Module):
    def __init__(self, obs=6, n_act=4):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(obs, 32), nn.Tanh(), nn.Linear(32, n_act))
        self.v = nn.Sequential(nn.Linear(obs, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, s):
        return F.log_softmax(self.pi(s), dim=-1), self.v(s).squeeze(-1)


def run():
    torch.manual_seed(0)
    policy = ActorCritic()
    opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
    s = torch.randn(32, 6)
    with torch.no_grad():
        old_logp_all, old_v = policy(s)
        actions = torch.multinomial(old_logp_all.exp(), 1)
        old_logp = old_logp_all.gather(1, actions).squeeze(1)
    returns = torch.randn(32)
    adv = returns - old_v
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    logp_all, v = policy(s)
    logp = logp_all.gather(1, actions).squeeze(1)
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 0.8, 1.2) * adv
    loss = -torch.min(ratio * adv, clipped).mean() + 0.5 * F.mse_loss(v, returns)  # <-- CUT
    approx_kl = (old_logp - logp).mean().item()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"policy": policy, "opt": opt, "loss": loss, "approx_kl": approx_kl}
