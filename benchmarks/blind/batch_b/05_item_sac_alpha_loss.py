"""SAC with automatic entropy tuning (rail-berkeley/softlearning#163, a PyTorch
port whose temperature "crashes or goes to 0"): the temperature is cached as a
Python float, self.alpha = self.log_alpha.exp().item(), and the alpha loss is
built from that float. alpha_loss.backward() raises; log_alpha never learns.
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Actor(nn.Module):
    def __init__(self, obs_dim=6, act_dim=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, 2 * act_dim))

    def sample(self, obs):
        mu, log_std = self.net(obs).chunk(2, dim=-1)
        std = log_std.clamp(-5, 2).exp()
        dist = torch.distributions.Normal(mu, std)
        u = dist.rsample()
        log_pi = (dist.log_prob(u) - torch.log(1 - torch.tanh(u) ** 2 + 1e-6)).sum(-1)
        return torch.tanh(u), log_pi


class SACAgent:
    def __init__(self, act_dim=2):
        self.actor = Actor(act_dim=act_dim)
        self.expected_entropy = -float(act_dim)
        self.log_alpha = torch.tensor(0.0, requires_grad=True)
        self.alpha_optimizer = torch.optim.Adam([self.log_alpha], lr=0.003)
        self.update_alpha()

    def update_alpha(self):
        self.alpha = self.log_alpha.exp().item()  # <-- CUT

    def update_temperature(self, obs):
        _, log_pi = self.actor.sample(obs)
        alpha_loss = -(self.alpha * (log_pi + self.expected_entropy).detach()).mean()
        self.alpha_optimizer.zero_grad()
        alpha_loss.backward()
        self.alpha_optimizer.step()
        self.update_alpha()
        return alpha_loss


def run():
    torch.manual_seed(0)
    agent = SACAgent()
    obs = torch.randn(16, 6)
    alpha_loss = agent.update_temperature(obs)
    return {"agent": agent, "alpha_loss": alpha_loss}
