"""PPO learner whose surrogate keeps only the clipped term, clamp(ratio, 1-eps, 1+eps) * adv,
dropping the min with the unclipped term. The stored old log-probs come from a stale policy
snapshot, so every ratio is outside the clip range and policy.pi[0].weight.grad is all zeros.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "learner.policy.pi[0].weight"
EXPECT = "grad_zero"


class Policy(nn.Module):
    def __init__(self, obs_dim=4, n_act=2):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_act))
        self.v = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))

    def dist(self, s):
        return torch.distributions.Categorical(logits=self.pi(s))


class PPOLearner:
    def __init__(self, clip=0.2, vf_coef=0.5):
        self.policy = Policy()
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.clip, self.vf_coef = clip, vf_coef

    def surrogate(self, logp, old_logp, adv):
        ratio = torch.exp(logp - old_logp)
        return -(torch.clamp(ratio, 1 - self.clip, 1 + self.clip) * adv).mean()  # <-- CUT

    def update(self, s, a, old_logp, adv, returns):
        logp = self.policy.dist(s).log_prob(a)
        pi_loss = self.surrogate(logp, old_logp, adv)
        v_loss = F.mse_loss(self.policy.v(s).squeeze(-1), returns)
        self.opt.zero_grad()
        (pi_loss + self.vf_coef * v_loss).backward()
        self.opt.step()
        return pi_loss.item(), v_loss.item()


def run():
    torch.manual_seed(0)
    learner = PPOLearner()
    s = torch.randn(64, 4)
    with torch.no_grad():
        a = learner.policy.dist(s).sample()
        old_logp = learner.policy.dist(s).log_prob(a) + torch.where(torch.rand(64) < 0.5, -3.0, 3.0)
    adv = torch.randn(64)
    losses = learner.update(s, a, old_logp, adv, torch.randn(64))
    return {"learner": learner, "losses": losses}
