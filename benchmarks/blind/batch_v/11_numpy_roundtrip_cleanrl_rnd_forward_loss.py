"""CleanRL-style PPO+RND: the intrinsic reward is computed from the predictor error and normalised
with a numpy RunningMeanStd (legit: rewards are data). The user then reuses that normalised
numpy error as the RND forward loss, so the predictor network never gets a gradient.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "rnd.predictor[0].weight"
EXPECT = "grad_none"


class RunningMeanStd:
    def __init__(self):
        self.mean, self.var, self.count = 0.0, 1.0, 1e-4

    def update(self, x):
        bm, bv, bc = x.mean(), x.var(), x.shape[0]
        delta, tot = bm - self.mean, self.count + bc
        self.mean = self.mean + delta * bc / tot
        self.var = (self.var * self.count + bv * bc + delta ** 2 * self.count * bc / tot) / tot
        self.count = tot


class RNDModel(nn.Module):
    def __init__(self, obs_dim=8, d=16):
        super().__init__()
        self.predictor = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, d))
        self.target = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, d))
        self.target.requires_grad_(False)

    def forward(self, obs):
        return self.predictor(obs), self.target(obs)


def run():
    torch.manual_seed(0)
    rnd = RNDModel()
    policy_head = nn.Linear(8, 3)
    optimizer = torch.optim.Adam(list(rnd.predictor.parameters()) + list(policy_head.parameters()), lr=1e-4)
    reward_rms = RunningMeanStd()
    next_obs = torch.randn(32, 8)

    predict_feature, target_feature = rnd(next_obs)
    err = ((target_feature - predict_feature).pow(2).sum(1) / 2).detach().cpu().numpy()  # <-- CUT
    reward_rms.update(err)
    curiosity_rewards = torch.from_numpy(err / np.sqrt(reward_rms.var + 1e-8)).float()

    logits = policy_head(next_obs)
    pg_loss = -(torch.log_softmax(logits, -1)[:, 0] * curiosity_rewards).mean()
    forward_loss = torch.from_numpy(err).float().mean()
    loss = pg_loss + forward_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"rnd": rnd, "policy_head": policy_head, "loss": loss}
