"""PPO clipped-surrogate update. To save a tensor the user clips the probability ratio in place,
ratio.clamp_(1 - eps, 1 + eps), after using it for the unclipped surrogate. ratio is the output of
torch.exp, which exp saves for its backward, so loss.backward() raises "one of the variables
needed for gradient computation has been modified by an inplace operation".
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=6, n_actions=3):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, n_actions))
        self.v = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 1))


class PPO:
    def __init__(self, clip_eps=0.2, vf_coef=0.5):
        self.ac = ActorCritic()
        self.opt = torch.optim.Adam(self.ac.parameters(), lr=3e-4)
        self.clip_eps, self.vf_coef = clip_eps, vf_coef

    def update(self, obs, actions, old_logp, advantages, returns):
        dist = Categorical(logits=self.ac.pi(obs))
        logp = dist.log_prob(actions)
        ratio = torch.exp(logp - old_logp)
        surr1 = ratio * advantages
        ratio.clamp_(1.0 - self.clip_eps, 1.0 + self.clip_eps)  # <-- CUT
        surr2 = ratio * advantages
        policy_loss = -torch.min(surr1, surr2).mean()
        value_loss = F.mse_loss(self.ac.v(obs).squeeze(-1), returns)
        loss = policy_loss + self.vf_coef * value_loss - 0.01 * dist.entropy().mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    ppo = PPO()
    obs = torch.randn(32, 6)
    with torch.no_grad():
        dist = Categorical(logits=ppo.ac.pi(obs))
        actions = dist.sample()
        old_logp = dist.log_prob(actions) + 0.3 * torch.randn(32)
    advantages, returns = torch.randn(32), torch.randn(32)
    loss = ppo.update(obs, actions, old_logp, advantages, returns)
    return {"ppo": ppo, "loss": loss}
