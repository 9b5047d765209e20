"""PPO with rollouts collected under torch.inference_mode() for speed (fine for the
actions and old log-probs). The update reuses the rollout's stored values for the value
loss instead of re-evaluating the critic, so that term is a constant. The clipped policy
term trains the actor; the value head receives no gradient.
"""
import torch
import torch.nn as nn
from torch.distributions import Normal

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.critic[2].weight"
EXPECT = "grad_none"


class PPOAgent:
    def __init__(self, n_obs=5, n_act=2):
        self.actor = nn.Sequential(nn.Linear(n_obs, 32), nn.Tanh(), nn.Linear(32, n_act))
        self.critic = nn.Sequential(nn.Linear(n_obs, 32), nn.Tanh(), nn.Linear(32, 1))
        self.log_std = nn.Parameter(torch.full((n_act,), -0.5))
        params = list(self.actor.parameters()) + list(self.critic.parameters()) + [self.log_std]
        self.opt = torch.optim.Adam(params, lr=3e-4)

    def dist(self, obs):
        return Normal(self.actor(obs), self.log_std.exp())

    def collect(self, obs):
        with torch.inference_mode():
            d = self.dist(obs)
            actions = d.sample()
            logp = d.log_prob(actions).sum(-1)
            values = self.critic(obs).squeeze(-1)  # <-- CUT
        rewards = -(actions ** 2).sum(-1)
        return {"obs": obs.clone(), "actions": actions.clone(), "logp": logp.clone(),
                "values": values.clone(), "returns": rewards.clone()}

    def update(self, buf, clip=0.2):
        adv = buf["returns"] - buf["values"]
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        d = self.dist(buf["obs"])
        ratio = torch.exp(d.log_prob(buf["actions"]).sum(-1) - buf["logp"])
        pg = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
        v_loss = (buf["values"] - buf["returns"]).pow(2).mean()
        loss = pg + 0.5 * v_loss
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    agent = PPOAgent()
    buf = agent.collect(torch.randn(64, 5))
    loss = agent.update(buf)
    return {"agent": agent, "buf": buf, "loss": loss}
