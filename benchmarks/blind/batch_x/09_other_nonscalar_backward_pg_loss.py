"""Policy-gradient trainer: the per-sample loss -(log_prob * advantage) is never
reduced with .mean()/.sum(), so loss.backward() raises 'grad can be implicitly
created only for scalar outputs'; the advantage is detached on purpose.
Thread (from memory): discuss.pytorch.org 'grad can be implicitly created only for scalar outputs' A2C."""
import torch
import torch.nn as nn

CAUSE = "other:nonscalar_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class PGTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.policy = nn.Sequential(nn.Linear(cfg["obs_dim"], 32), nn.Tanh(), nn.Linear(32, cfg["n_actions"]))
        self.value = nn.Sequential(nn.Linear(cfg["obs_dim"], 32), nn.Tanh(), nn.Linear(32, 1))
        self.opt = torch.optim.Adam(list(self.policy.parameters()) + list(self.value.parameters()), lr=3e-4)

    def train_batch(self, obs, actions, returns):
        dist = torch.distributions.Categorical(logits=self.policy(obs))
        values = self.value(obs).squeeze(-1)
        advantage = (returns - values).detach()
        loss = -dist.log_prob(actions) * advantage + self.cfg["vf_coef"] * (returns - values).pow(2)  # <-- CUT
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


def run():
    torch.manual_seed(0)
    tr = PGTrainer({"obs_dim": 4, "n_actions": 3, "vf_coef": 0.5})
    obs = torch.randn(10, 4)
    actions = torch.randint(0, 3, (10,))
    returns = torch.randn(10)
    tr.train_batch(obs, actions, returns)
    return {"trainer": tr}
