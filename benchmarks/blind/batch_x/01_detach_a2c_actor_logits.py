"""A2C agent: the advantage is detached on purpose, but ActorCritic.forward also
detaches the actor logits (left over from a 'freeze policy' experiment); the critic
trains, the actor head never gets a gradient.
Thread: alexhernandezgarcia/gflownet#251 (policy logits detached in get_logprobs)."""
import torch
import torch.nn as nn

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.actor.weight"
EXPECT = "grad_none"


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=6, n_actions=3, hidden=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh())
        self.actor = nn.Linear(hidden, n_actions)
        self.critic = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        logits = self.actor(h).detach()  # <-- CUT
        value = self.critic(h).squeeze(-1)
        return logits, value


def run():
    torch.manual_seed(0)
    cfg = {"gamma": 0.99, "value_coef": 0.5, "entropy_coef": 0.01}
    agent = ActorCritic()
    opt = torch.optim.Adam(agent.parameters(), lr=7e-4)
    obs = torch.randn(8, 6)
    rewards = torch.randn(8)
    logits, values = agent(obs)
    dist = torch.distributions.Categorical(logits=logits)
    actions = dist.sample()
    returns = torch.zeros(8)
    running = torch.tensor(0.0)
    for t in reversed(range(8)):
        running = rewards[t] + cfg["gamma"] * running
        returns[t] = running
    advantage = (returns - values).detach()
    policy_loss = -(dist.log_prob(actions) * advantage).mean()
    value_loss = (returns - values).pow(2).mean()
    loss = policy_loss + cfg["value_coef"] * value_loss - cfg["entropy_coef"] * dist.entropy().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"agent": agent, "loss": loss}
