"""CleanRL-style SAC actor where the tanh-squash correction was written without the 1e-6 epsilon:
`log(1 - y_t.pow(2))`. With an action-scale-sized mean the pre-tanh sample saturates, tanh
returns exactly 1.0 in float32 for a few samples, log(0) = -inf, and the actor's gradient turns into NaN.
"""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "actor.fc_mean.weight"
EXPECT = "grad_nonfinite"

LOG_STD_MAX, LOG_STD_MIN = 2, -5


class Actor(nn.Module):
    def __init__(self, obs_dim=5, act_dim=2):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, 32)
        self.fc_mean = nn.Linear(32, act_dim)
        self.fc_logstd = nn.Linear(32, act_dim)

    def get_action(self, x):
        h = torch.relu(self.fc1(x))
        mean = self.fc_mean(h)
        log_std = torch.tanh(self.fc_logstd(h))
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)
        std = log_std.exp()
        normal = torch.distributions.Normal(mean, std)
        x_t = normal.rsample()
        y_t = torch.tanh(x_t)
        log_prob = normal.log_prob(x_t)
        log_prob = log_prob - torch.log(1 - y_t.pow(2))  # <-- CUT
        return y_t, log_prob.sum(1, keepdim=True)


def run():
    torch.manual_seed(0)
    actor = Actor()
    with torch.no_grad():
        actor.fc_mean.bias.fill_(8.5)
    qf1 = nn.Sequential(nn.Linear(7, 32), nn.ReLU(), nn.Linear(32, 1))
    actor_optimizer = torch.optim.Adam(actor.parameters(), lr=3e-4)
    alpha = 0.2
    obs = torch.randn(16, 5)
    pi, log_pi = actor.get_action(obs)
    actor_loss = ((alpha * log_pi) - qf1(torch.cat([obs, pi], 1))).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    return {"actor": actor, "actor_loss": actor_loss}
