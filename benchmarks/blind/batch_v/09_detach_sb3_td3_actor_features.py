"""SB3-style TD3 with a custom actor that reuses the critic's trick of not training the shared
features extractor: it detaches the features. The actor loss -Q(s, actor(s)) then reaches the
actor's mu head but not its own (non-shared) extractor. The target computation is a legit no_grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "actor.features_extractor[0].weight"
EXPECT = "grad_none"


class Actor(nn.Module):
    def __init__(self, obs_dim=8, act_dim=2):
        super().__init__()
        self.features_extractor = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU())
        self.mu = nn.Sequential(nn.Linear(32, act_dim), nn.Tanh())

    def forward(self, obs):
        features = self.features_extractor(obs).detach()  # <-- CUT
        return self.mu(features)


class Critic(nn.Module):
    def __init__(self, obs_dim=8, act_dim=2):
        super().__init__()
        self.q1 = nn.Sequential(nn.Linear(obs_dim + act_dim, 32), nn.ReLU(), nn.Linear(32, 1))

    def q1_forward(self, obs, act):
        return self.q1(torch.cat([obs, act], 1))


def polyak_update(params, target_params, tau):
    with torch.no_grad():
        for p, tp in zip(params, target_params):
            tp.mul_(1 - tau).add_(p, alpha=tau)


def run():
    torch.manual_seed(0)
    actor, critic = Actor(), Critic()
    actor_target, critic_target = Actor(), Critic()
    actor_target.load_state_dict(actor.state_dict())
    critic_target.load_state_dict(critic.state_dict())
    actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
    critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
    obs, next_obs = torch.randn(16, 8), torch.randn(16, 8)
    act, rew = torch.rand(16, 2) * 2 - 1, torch.randn(16, 1)

    with torch.no_grad():
        noise = (torch.randn_like(act) * 0.2).clamp(-0.5, 0.5)
        next_act = (actor_target(next_obs) + noise).clamp(-1, 1)
        target_q = rew + 0.99 * critic_target.q1_forward(next_obs, next_act)
    critic_loss = F.mse_loss(critic.q1_forward(obs, act), target_q)
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()

    actor_loss = -critic.q1_forward(obs, actor(obs)).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
    polyak_update(actor.parameters(), actor_target.parameters(), 0.005)
    return {"actor": actor, "critic": critic, "actor_loss": actor_loss}
