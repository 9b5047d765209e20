"""SB3-style SAC with share_features_extractor=True: the critic computes its features under
`set_grad_enabled(not share_features_extractor)`. The user trains a new CNN extractor only through
the critic loss (actor update disabled during a warm-up), so the extractor never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.features_extractor.net[0].weight"
EXPECT = "grad_none"


class FeaturesExtractor(nn.Module):
    def __init__(self, obs_dim=10, features_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, features_dim), nn.ReLU())

    def forward(self, obs):
        return self.net(obs)


class ContinuousCritic(nn.Module):
    def __init__(self, features_extractor, share_features_extractor, features_dim=16, act_dim=2):
        super().__init__()
        self.features_extractor = features_extractor
        self.share_features_extractor = share_features_extractor
        self.qf0 = nn.Sequential(nn.Linear(features_dim + act_dim, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, obs, actions):
        with torch.set_grad_enabled(not self.share_features_extractor):
            features = self.features_extractor(obs)  # <-- CUT
        return self.qf0(torch.cat([features, actions], dim=1))


class SACPolicy(nn.Module):
    def __init__(self, share_features_extractor=True):
        super().__init__()
        self.features_extractor = FeaturesExtractor()
        self.actor = nn.Sequential(nn.Linear(16, 2), nn.Tanh())
        self.critic = ContinuousCritic(self.features_extractor, share_features_extractor)
        self.critic_target = ContinuousCritic(FeaturesExtractor(), False)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.critic_target.requires_grad_(False)


def run():
    torch.manual_seed(0)
    policy = SACPolicy(share_features_extractor=True)
    critic_opt = torch.optim.Adam(policy.critic.parameters(), lr=3e-4)
    obs, next_obs = torch.randn(8, 10), torch.randn(8, 10)
    actions, rewards = torch.rand(8, 2) * 2 - 1, torch.randn(8, 1)
    with torch.no_grad():
        next_actions = policy.actor(policy.features_extractor(next_obs))
        target_q = rewards + 0.99 * policy.critic_target(next_obs, next_actions)
    current_q = policy.critic(obs, actions)
    critic_loss = F.mse_loss(current_q, target_q)
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
    return {"policy": policy, "critic_loss": critic_loss}
