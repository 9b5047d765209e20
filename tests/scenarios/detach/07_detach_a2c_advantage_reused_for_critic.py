"""A2C update: the rollout buffer computes advantages as
`(returns - values).detach()` so the policy-gradient term does not push the
critic, and the trainer reuses the same detached advantages for the critic's
squared-error loss. The actor trains; critic.net[0].weight.grad is None.
"""
import torch
import torch.nn as nn

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "critic.net[0].weight"
EXPECT = "grad_none"


class Actor(nn.Module):
    def __init__(self, obs=6, n_act=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs, 32), nn.Tanh(), nn.Linear(32, n_act))

    def forward(self, s):
        return torch.distributions.Categorical(logits=self.net(s))


class Critic(nn.Module):
    def __init__(self, obs=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, s):
        return self.net(s).squeeze(-1)


class RolloutBuffer:
    def __init__(self, gamma=0.99):
        self.gamma = gamma
        self.rewards, self.values, self.logps = [], [], []

    def add(self, reward, value, logp):
        self.rewards.append(reward)
        self.values.append(value)
        self.logps.append(logp)

    def returns(self):
        R, out = torch.zeros(()), []
        for r in reversed(self.rewards):
            R = r + self.gamma * R
            out.insert(0, R)
        return torch.stack(out)

    def advantages(self):
        values = torch.stack(self.values)
        return (self.returns() - values).detach()  # <-- CUT


def run():
    torch.manual_seed(0)
    actor, critic = Actor(), Critic()
    opt = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=1e-3)
    buf = RolloutBuffer()
    s = torch.randn(6)
    for t in range(6):
        dist = actor(s)
        a = dist.sample()
        buf.add(torch.randn(()), critic(s), dist.log_prob(a))
        s = torch.randn(6)  # env.step(a) stand-in
    adv = buf.advantages()
    actor_loss = -(torch.stack(buf.logps) * adv).mean()
    critic_loss = adv.pow(2).mean()
    loss = actor_loss + 0.5 * critic_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"actor": actor, "critic": critic, "opt": opt, "loss": loss}
