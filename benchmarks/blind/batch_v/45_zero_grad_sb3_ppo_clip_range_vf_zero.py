"""SB3-style PPO value loss with `clip_range_vf=0.0`, set by a user who read "0 disables clipping"
(None does). values_pred = old_values + clamp(values - old_values, -0, 0): after the first epoch
values differ from old_values, the clamp is saturated and value_net's gradient is exactly zero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.value_net.weight"
EXPECT = "grad_zero"


class ActorCriticPolicy(nn.Module):
    def __init__(self, obs_dim=6, n_act=3):
        super().__init__()
        self.pi_net = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh())
        self.vf_net = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh())
        self.action_net = nn.Linear(32, n_act)
        self.value_net = nn.Linear(32, 1)

    def evaluate_actions(self, obs, actions):
        dist = torch.distributions.Categorical(logits=self.action_net(self.pi_net(obs)))
        return self.value_net(self.vf_net(obs)).flatten(), dist.log_prob(actions), dist.entropy()


def run():
    torch.manual_seed(0)
    hparams = {"clip_range": 0.2, "clip_range_vf": 0.0, "n_epochs": 2, "vf_coef": 0.5, "ent_coef": 0.0}
    policy = ActorCriticPolicy()
    opt = torch.optim.Adam(policy.parameters(), lr=3e-3)
    obs, actions = torch.randn(32, 6), torch.randint(0, 3, (32,))
    with torch.no_grad():
        old_values, old_log_prob, _ = policy.evaluate_actions(obs, actions)
    returns = old_values + torch.randn(32)
    advantages = returns - old_values
    for epoch in range(hparams["n_epochs"]):
        values, log_prob, entropy = policy.evaluate_actions(obs, actions)
        ratio = torch.exp(log_prob - old_log_prob)
        policy_loss = -torch.min(advantages * ratio, advantages * torch.clamp(ratio, 0.8, 1.2)).mean()
        clip_range_vf = hparams["clip_range_vf"]
        if clip_range_vf is None:
            values_pred = values
        else:
            values_pred = old_values + torch.clamp(values - old_values, -clip_range_vf, clip_range_vf)  # <-- CUT
        value_loss = F.mse_loss(returns, values_pred)
        loss = policy_loss + hparams["ent_coef"] * -entropy.mean() + hparams["vf_coef"] * value_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"policy": policy, "loss": loss}
