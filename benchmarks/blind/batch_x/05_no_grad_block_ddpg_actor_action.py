"""DDPG agent: the critic target is rightly computed under torch.no_grad(), but the
actor update copy-pastes that block, so the actor's action is produced without a
graph; critic params get grads from actor_loss, the actor gets none.
Thread (from memory): discuss.pytorch.org 'DDPG actor not learning, actor grad None'."""
import torch
import torch.nn as nn

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.actor[0].weight"
EXPECT = "grad_none"


class Agent:
    def __init__(self, obs_dim=5, act_dim=2):
        self.actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, act_dim), nn.Tanh())
        self.critic = nn.Sequential(nn.Linear(obs_dim + act_dim, 32), nn.ReLU(), nn.Linear(32, 1))
        self.actor_t = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, act_dim), nn.Tanh())
        self.critic_t = nn.Sequential(nn.Linear(obs_dim + act_dim, 32), nn.ReLU(), nn.Linear(32, 1))
        self.actor_t.load_state_dict(self.actor.state_dict())
        self.critic_t.load_state_dict(self.critic.state_dict())
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-4)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def update(self, s, a, r, s2, done, gamma=0.99):
        with torch.no_grad():
            y = r + gamma * (1 - done) * self.critic_t(torch.cat([s2, self.actor_t(s2)], 1))
        q = self.critic(torch.cat([s, a], 1))
        critic_loss = (q - y).pow(2).mean()
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()

        with torch.no_grad():
            pi = self.actor(s)  # <-- CUT
        actor_loss = -self.critic(torch.cat([s, pi], 1)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
        return critic_loss.item(), actor_loss.item()


def run():
    torch.manual_seed(0)
    agent = Agent()
    s, s2 = torch.randn(16, 5), torch.randn(16, 5)
    a = torch.rand(16, 2) * 2 - 1
    r, done = torch.randn(16, 1), torch.zeros(16, 1)
    losses = agent.update(s, a, r, s2, done)
    return {"agent": agent, "losses": losses}
