"""CleanRL-style SAC with entropy autotuning: `alpha = log_alpha.exp().item()` is legit for the
actor and critic losses, but the user also writes the temperature loss with that float
(`-alpha * (log_pi + target_entropy)`), so a_optimizer's loss has no graph and backward raises.
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "log_alpha"
EXPECT = "backward_error"


class Actor(nn.Module):
    def __init__(self, obs_dim=6, act_dim=2):
        super().__init__()
        self.fc = nn.Linear(obs_dim, 32)
        self.mean = nn.Linear(32, act_dim)
        self.logstd = nn.Linear(32, act_dim)

    def get_action(self, x):
        h = torch.relu(self.fc(x))
        mean, log_std = self.mean(h), torch.tanh(self.logstd(h))
        std = log_std.exp()
        x_t = mean + std * torch.randn_like(mean)
        y_t = torch.tanh(x_t)
        log_prob = (-0.5 * ((x_t - mean) / std) ** 2 - log_std - 0.9189).sum(1, keepdim=True)
        log_prob = log_prob - torch.log(1 - y_t.pow(2) + 1e-6).sum(1, keepdim=True)
        return y_t, log_prob


def run():
    torch.manual_seed(0)
    actor = Actor()
    qf1 = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
    actor_optimizer = torch.optim.Adam(actor.parameters(), lr=3e-4)
    target_entropy = -2.0
    log_alpha = torch.zeros(1, requires_grad=True)
    alpha = log_alpha.exp().item()  # <-- CUT
    a_optimizer = torch.optim.Adam([log_alpha], lr=1e-3)
    obs = torch.randn(16, 6)

    pi, log_pi = actor.get_action(obs)
    actor_loss = ((alpha * log_pi) - qf1(torch.cat([obs, pi], 1))).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()

    with torch.no_grad():
        _, log_pi = actor.get_action(obs)
    alpha_loss = (-alpha * (log_pi + target_entropy)).mean()
    a_optimizer.zero_grad()
    alpha_loss.backward()
    a_optimizer.step()
    return {"actor": actor, "log_alpha": log_alpha, "alpha_loss": alpha_loss}
