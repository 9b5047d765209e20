"""Behaviour cloning for an SB3-style policy on a MultiDiscrete env: the user's `predict_actions`
converts the continuous action head output with `.long()` (the env wants ints) and the BC loss is
MSE between that cast prediction (as float) and the expert actions; the action head gets no grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.action_net.weight"
EXPECT = "grad_none"


class Policy(nn.Module):
    def __init__(self, obs_dim=6, n_dims=2, n_bins=5):
        super().__init__()
        self.n_bins = n_bins
        self.mlp_extractor = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh())
        self.action_net = nn.Linear(32, n_dims)
        self.value_net = nn.Linear(32, 1)

    def predict_actions(self, obs):
        latent = self.mlp_extractor(obs)
        raw = torch.sigmoid(self.action_net(latent)) * (self.n_bins - 1)
        actions = raw.long()  # <-- CUT
        return actions, self.value_net(latent)


def run():
    torch.manual_seed(0)
    policy = Policy()
    opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
    expert_obs = torch.randn(32, 6)
    expert_actions = torch.randint(0, 5, (32, 2))
    expert_returns = torch.randn(32, 1)
    pred_actions, values = policy.predict_actions(expert_obs)
    bc_loss = F.mse_loss(pred_actions.float(), expert_actions.float())
    value_loss = F.mse_loss(values, expert_returns)
    loss = bc_loss + 0.5 * value_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"policy": policy, "loss": loss}
