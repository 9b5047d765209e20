"""Control (SB3-style SAC/TD3 critic update): the target critic is a copy filled by
load_state_dict, frozen with requires_grad_(False), evaluated under torch.no_grad(), and updated
by a polyak step through `.data`. All deliberate cuts; the online critic trains normally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "critic.q_networks[0][0].weight"
EXPECT = "grad_ok"


class ContinuousCritic(nn.Module):
    def __init__(self, obs_dim=6, act_dim=2, n_critics=2):
        super().__init__()
        self.q_networks = nn.ModuleList([
            nn.Sequential(nn.Linear(obs_dim + act_dim, 32), nn.ReLU(), nn.Linear(32, 1)) for _ in range(n_critics)])

    def forward(self, obs, act):
        x = torch.cat([obs, act], 1)
        return tuple(q(x) for q in self.q_networks)


def polyak_update(params, target_params, tau):
    for p, tp in zip(params, target_params):
        tp.data.mul_(1 - tau).add_(p.data, alpha=tau)


def run():
    torch.manual_seed(0)
    critic, critic_target = ContinuousCritic(), ContinuousCritic()
    critic_target.load_state_dict(critic.state_dict())
    critic_target.requires_grad_(False)
    actor = nn.Sequential(nn.Linear(6, 2), nn.Tanh())
    critic_opt = torch.optim.Adam(critic.parameters(), lr=3e-4)
    obs, next_obs = torch.randn(16, 6), torch.randn(16, 6)
    act, rew, done = torch.rand(16, 2) * 2 - 1, torch.randn(16, 1), torch.zeros(16, 1)
    with torch.no_grad():
        next_q = torch.cat(critic_target(next_obs, actor(next_obs)), 1).min(1, keepdim=True).values
        target_q = rew + (1 - done) * 0.99 * next_q
    current_q = critic(obs, act)
    critic_loss = 0.5 * sum(F.mse_loss(q, target_q) for q in current_q)  # <-- CUT
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
    polyak_update(critic.parameters(), critic_target.parameters(), 0.005)
    return {"critic": critic, "critic_target": critic_target, "critic_loss": critic_loss}
