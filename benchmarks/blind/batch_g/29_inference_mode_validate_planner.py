"""RL trainer whose validation loop is wrapped in torch.inference_mode() for
speed. The policy's action refinement (a few gradient steps on a learned cost,
done with torch.autograd.grad under torch.enable_grad()) then fails during
validation: enable_grad cannot re-enable autograd inside inference mode.
"""
import torch
import torch.nn as nn

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "None"
EXPECT = "backward_error"


class CostModel(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + act_dim, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, obs, act):
        return self.net(torch.cat([obs, act], -1)).squeeze(-1)


class RefinedPolicy(nn.Module):
    """Initial action from an actor, then n_iter gradient steps on the cost."""

    def __init__(self, obs_dim, act_dim, n_iter=3, step=0.1):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, act_dim), nn.Tanh())
        self.cost = CostModel(obs_dim, act_dim)
        self.n_iter, self.step = n_iter, step

    def refine(self, obs, action):
        with torch.enable_grad():
            a = action.detach().clone().requires_grad_(True)
            for _ in range(self.n_iter):
                c = self.cost(obs, a).sum()  # <-- CUT
                (g,) = torch.autograd.grad(c, a)
                a = (a - self.step * g).clamp(-1, 1).detach().requires_grad_(True)
        return a.detach()

    def forward(self, obs):
        return self.refine(obs, self.actor(obs))


class ToyEnv:
    def __init__(self, obs_dim=4, horizon=3):
        self.obs_dim, self.horizon = obs_dim, horizon

    def reset(self):
        self.t = 0
        return torch.linspace(-1, 1, self.obs_dim).unsqueeze(0)

    def step(self, action):
        self.t += 1
        obs = torch.tanh(torch.linspace(-1, 1, self.obs_dim).unsqueeze(0) + action.sum())
        return obs, -action.pow(2).sum().item(), self.t >= self.horizon


class Trainer:
    def __init__(self, policy, env):
        self.policy, self.env = policy, env
        self.optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)

    def episode_rollout(self):
        obs, ret, done = self.env.reset(), 0.0, False
        while not done:
            action = self.policy(obs)
            obs, r, done = self.env.step(action)
            ret += r
        return ret

    def validate(self):
        self.policy.eval()
        return self.episode_rollout()

    def run(self, n_train_steps=1):
        for _ in range(n_train_steps):
            self.policy.train()
            obs = torch.randn(8, self.env.obs_dim)
            loss = self.policy.cost(obs, self.policy.actor(obs)).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        with torch.inference_mode():
            val_return = self.validate()
        return val_return


def run():
    torch.manual_seed(0)
    trainer = Trainer(RefinedPolicy(obs_dim=4, act_dim=2), ToyEnv())
    val_return = trainer.run()
    return {"trainer": trainer, "val_return": val_return}
