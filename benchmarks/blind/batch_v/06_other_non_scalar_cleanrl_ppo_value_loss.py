"""CleanRL-style PPO continuous-action update run with clip_vloss=False: the unclipped value-loss
branch lacks its `.mean()`, so v_loss stays a per-sample vector, the total loss
(pg_loss - ent_coef*entropy + vf_coef*v_loss) is non-scalar, and backward raises
"grad can be implicitly created only for scalar outputs". The default clipped branch is fine.
"""
import torch
import torch.nn as nn
from torch.distributions.normal import Normal

CAUSE = "other:non_scalar_loss_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.critic[0].weight"
EXPECT = "backward_error"


class Agent(nn.Module):
    def __init__(self, obs_dim=6, act_dim=2):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))
        self.actor_mean = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, act_dim))
        self.actor_logstd = nn.Parameter(torch.zeros(1, act_dim))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        mean = self.actor_mean(x)
        probs = Normal(mean, self.actor_logstd.expand_as(mean).exp())
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action).sum(1), probs.entropy().sum(1), self.critic(x)


def run():
    torch.manual_seed(0)
    args = {"clip_coef": 0.2, "ent_coef": 0.0, "vf_coef": 0.5, "clip_vloss": False}
    agent = Agent()
    optimizer = torch.optim.Adam(agent.parameters(), lr=3e-4, eps=1e-5)
    b_obs = torch.randn(16, 6)
    with torch.no_grad():
        b_actions, b_logprobs, _, b_values = agent.get_action_and_value(b_obs)
        b_values = b_values.flatten()
    b_returns = b_values + torch.randn(16)
    b_advantages = b_returns - b_values
    mb_inds = torch.arange(8)

    _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb_inds], b_actions[mb_inds])
    ratio = (newlogprob - b_logprobs[mb_inds]).exp()
    mb_adv = b_advantages[mb_inds]
    pg_loss = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 0.8, 1.2)).mean()
    newvalue = newvalue.view(-1)
    if args["clip_vloss"]:
        v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
        v_clipped = b_values[mb_inds] + torch.clamp(newvalue - b_values[mb_inds], -args["clip_coef"], args["clip_coef"])
        v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
        v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
    else:
        v_loss = 0.5 * ((newvalue - b_returns[mb_inds]) ** 2)  # <-- CUT
    loss = pg_loss - args["ent_coef"] * entropy.mean() + v_loss * args["vf_coef"]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"agent": agent, "loss": loss}
