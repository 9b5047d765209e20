"""DDPG actor update: the actor's action is detached before it goes into the
critic (copied from the critic update, where detaching is correct). The
actor loss trains nothing, and the actor's weights get no gradient.
"""
import torch
import torch.nn as nn

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "actor[0].weight"
EXPECT = "grad_none"


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3 + 1, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, s, a):
        return self.net(torch.cat([s, a], dim=1))


def run():
    torch.manual_seed(0)
    actor = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1), nn.Tanh())
    critic = Critic()
    actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-4)
    s = torch.randn(10, 3)
    a = actor(s).detach()  # <-- CUT
    actor_loss = -critic(s, a).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
    return {"actor": actor, "critic": critic, "loss": actor_loss}
