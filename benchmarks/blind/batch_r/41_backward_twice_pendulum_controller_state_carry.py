"""Training a neural controller through a differentiable pendulum in short windows: the
simulator state is carried from one window to the next without detach, so the second
window's backward reaches into the first window's freed graph and raises.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Controller(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, state):
        return 2.0 * torch.tanh(self.net(state))


class PendulumEnv:
    def __init__(self, dt=0.05, g=9.81, L=1.0):
        self.dt, self.g, self.L = dt, g, L
        self.state = torch.tensor([[3.0, 0.0]])

    def step(self, state, torque):
        theta, omega = state[:, :1], state[:, 1:]
        omega = omega + self.dt * (-self.g / self.L * torch.sin(theta) + torque)
        theta = theta + self.dt * omega
        return torch.cat([theta, omega], dim=1)


def run():
    torch.manual_seed(0)
    ctrl = Controller()
    env = PendulumEnv()
    opt = torch.optim.Adam(ctrl.parameters(), lr=1e-2)
    for window in range(3):
        state = env.state
        cost = 0.0
        for _ in range(10):
            state = env.step(state, ctrl(state))
            cost = cost + (torch.cos(state[:, 0]) - 1.0).pow(2).sum() * -1.0 + 0.01 * state[:, 1].pow(2).sum()
        env.state = state  # <-- CUT
        opt.zero_grad()
        cost.backward()
        opt.step()
    return {"ctrl": ctrl}
