"""DDPG update reordered for speed: actor_loss is built from the critic, then the
critic loss is backpropagated and critic_opt.step() runs before actor_loss.backward();
the step rewrote the critic weights saved by actor_loss, so backward raises.
Thread: starry-sky6688/MADDPG#27 (critic updated before actor -> inplace error)."""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Trainer:
    def __init__(self):
        self.actor = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1), nn.Tanh())
        self.critic = nn.Sequential(nn.Linear(5, 32), nn.ReLU(), nn.Linear(32, 1))
        self.critic_t = nn.Sequential(nn.Linear(5, 32), nn.ReLU(), nn.Linear(32, 1))
        self.critic_t.load_state_dict(self.critic.state_dict())
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-4)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def step(self, s, a, r, s2):
        actor_loss = -self.critic(torch.cat([s, self.actor(s)], 1)).mean()
        with torch.no_grad():
            y = r + 0.99 * self.critic_t(torch.cat([s2, self.actor(s2)], 1))
        critic_loss = (self.critic(torch.cat([s, a], 1)) - y).pow(2).mean()
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()  # <-- CUT
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()


def run():
    torch.manual_seed(0)
    tr = Trainer()
    s, s2 = torch.randn(8, 4), torch.randn(8, 4)
    a, r = torch.rand(8, 1), torch.randn(8, 1)
    tr.step(s, a, r, s2)
    return {"trainer": tr}
