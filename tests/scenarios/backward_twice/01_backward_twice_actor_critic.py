"""Actor-critic with a shared trunk: the actor loss is backpropagated, then the
critic loss, both built from the same trunk output. The first backward freed
the shared part of the graph (no retain_graph), so the second raises "backward
through the graph a second time"; the line to change is that first backward.
"""
import torch
import torch.nn as nn

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 32), nn.Tanh())
        self.pi = nn.Linear(32, 2)
        self.v = nn.Linear(32, 1)

    def forward(self, s):
        h = self.trunk(s)
        return torch.log_softmax(self.pi(h), -1), self.v(h).squeeze(-1)


def run():
    torch.manual_seed(0)
    ac = ActorCritic()
    opt = torch.optim.Adam(ac.parameters(), lr=3e-4)
    states = torch.randn(5, 4)
    actions = torch.randint(0, 2, (5,))
    returns = torch.randn(5)
    logp, values = ac(states)
    adv = returns - values
    actor_loss = -(logp[torch.arange(5), actions] * adv).mean()
    critic_loss = adv.pow(2).mean()
    opt.zero_grad()
    actor_loss.backward()  # <-- CUT
    critic_loss.backward()
    opt.step()
    return {"ac": ac, "loss": critic_loss}
