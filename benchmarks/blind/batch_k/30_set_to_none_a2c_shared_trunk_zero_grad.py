"""Actor-critic with a shared trunk and two optimizers (actor: trunk + policy head, critic:
value head). update_critic() starts with model.zero_grad(), written for the critic, but it runs
after the actor backward and before actor_opt.step(): model.policy_head.weight.grad is None at step time.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.policy_head.weight"
EXPECT = "grad_none"


class SharedAC(nn.Module):
    def __init__(self, obs_dim=8, n_act=4):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU())
        self.policy_head, self.value_head = nn.Linear(64, n_act), nn.Linear(64, 1)

    def forward(self, s):
        h = self.trunk(s)
        return torch.distributions.Categorical(logits=self.policy_head(h)), self.value_head(h.detach()).squeeze(-1)


class Learner:
    def __init__(self):
        self.model = SharedAC()
        self.actor_opt = torch.optim.Adam(list(self.model.trunk.parameters())
                                          + list(self.model.policy_head.parameters()), lr=3e-4)
        self.critic_opt = torch.optim.Adam(self.model.value_head.parameters(), lr=1e-3)

    def update_critic(self, values, returns):
        self.model.zero_grad()  # <-- CUT
        v_loss = F.mse_loss(values, returns)
        v_loss.backward()
        return v_loss

    def update(self, s, a, returns):
        dist, values = self.model(s)
        adv = (returns - values).detach()
        pi_loss = -(dist.log_prob(a) * adv).mean() - 0.01 * dist.entropy().mean()
        self.actor_opt.zero_grad()
        pi_loss.backward()
        v_loss = self.update_critic(values, returns)
        nn.utils.clip_grad_norm_(self.model.parameters(), 0.5)
        self.actor_opt.step()
        self.critic_opt.step()
        return pi_loss.item(), v_loss.item()


def run():
    torch.manual_seed(0)
    learner = Learner()
    s, a, ret = torch.randn(64, 8), torch.randint(0, 4, (64,)), torch.randn(64)
    losses = learner.update(s, a, ret)
    return {"learner": learner, "model": learner.model, "losses": losses}
