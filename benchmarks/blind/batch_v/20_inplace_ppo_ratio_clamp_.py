"""PPO update (cleanrl-like loop) where the user "optimises" the clipped surrogate by clamping
the probability ratio in place: `ratio.clamp_(1-eps, 1+eps)` after computing the unclipped term.
exp() saved its output `ratio` for backward, so backward raises the in-place version error.
"""
import torch
import torch.nn as nn
from torch.distributions import Categorical

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.actor[0].weight"
EXPECT = "backward_error"


class Agent(nn.Module):
    def __init__(self, obs_dim=4, n_act=2):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_act))
        self.critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))

    def get_action_and_value(self, x, action=None):
        probs = Categorical(logits=self.actor(x))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def run():
    torch.manual_seed(0)
    clip_coef = 0.2
    agent = Agent()
    optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
    obs = torch.randn(16, 4)
    with torch.no_grad():
        actions, old_logprob, _, old_values = agent.get_action_and_value(obs)
    returns = old_values.flatten() + torch.randn(16)
    advantages = returns - old_values.flatten()
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)

    _, newlogprob, entropy, newvalue = agent.get_action_and_value(obs, actions)
    ratio = (newlogprob - old_logprob).exp()
    pg_loss1 = -advantages * ratio
    pg_loss2 = -advantages * ratio.clamp_(1 - clip_coef, 1 + clip_coef)  # <-- CUT
    pg_loss = torch.max(pg_loss1, pg_loss2).mean()
    v_loss = 0.5 * ((newvalue.view(-1) - returns) ** 2).mean()
    loss = pg_loss - 0.01 * entropy.mean() + 0.5 * v_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"agent": agent, "loss": loss}
