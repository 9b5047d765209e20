"""Actor-critic with a shared conv-free body and two optimizers. To stop the critic loss
from shaping the body, update_critic freezes the body with requires_grad_(False) and is
supposed to unfreeze it afterwards, but the unfreeze was put under `if self.debug:`.
The actor step that follows trains the policy head only; the body's grad stays None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.body[0].weight"
EXPECT = "grad_none"


class SharedAC(nn.Module):
    def __init__(self, n_obs=6, n_act=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_obs, 32), nn.ReLU())
        self.pi = nn.Linear(32, n_act)
        self.v = nn.Linear(32, 1)

    def forward(self, s):
        h = self.body(s)
        return self.pi(h), self.v(h).squeeze(-1)


class Learner:
    def __init__(self, model, debug=False):
        self.model, self.debug = model, debug
        self.actor_opt = torch.optim.Adam(list(model.body.parameters()) + list(model.pi.parameters()), lr=1e-3)
        self.critic_opt = torch.optim.Adam(model.v.parameters(), lr=1e-3)

    def update_critic(self, s, ret):
        self.model.body.requires_grad_(False)  # <-- CUT
        _, v = self.model(s)
        loss = F.mse_loss(v, ret)
        self.critic_opt.zero_grad()
        loss.backward()
        self.critic_opt.step()
        if self.debug:
            self.model.body.requires_grad_(True)
        return loss.item()

    def update_actor(self, s, a, adv):
        logits, _ = self.model(s)
        loss = -(Categorical(logits=logits).log_prob(a) * adv).mean()
        self.actor_opt.zero_grad()
        loss.backward()
        self.actor_opt.step()
        return loss


def run():
    torch.manual_seed(0)
    model = SharedAC()
    learner = Learner(model)
    s = torch.randn(32, 6)
    a = torch.randint(0, 3, (32,))
    ret = torch.randn(32)
    critic_loss = learner.update_critic(s, ret)
    with torch.no_grad():
        adv = ret - model(s)[1]
    actor_loss = learner.update_actor(s, a, adv)
    return {"model": model, "learner": learner, "actor_loss": actor_loss, "critic_loss": critic_loss}
