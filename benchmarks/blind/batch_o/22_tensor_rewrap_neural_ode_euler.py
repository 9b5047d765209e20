"""Hand-rolled fixed-step neural ODE solver: odeint() returns
y0.new_tensor(ys) "to keep dtype and device of the initial state". new_tensor
copies the trajectory without history, so the classifier head trains but the
ODE dynamics network gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.odefunc.net[0].weight"
EXPECT = "grad_none"


class ODEFunc(nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d + 1, 32), nn.Tanh(), nn.Linear(32, d))

    def forward(self, t, y):
        return self.net(torch.cat([y, t.expand(y.shape[0], 1)], 1))


def odeint(func, y0, t):
    ys = [y0]
    y = y0
    for t0, t1 in zip(t[:-1], t[1:]):
        y = y + (t1 - t0) * func(t0.view(1, 1), y)
        ys.append(y)
    return y0.new_tensor(torch.stack(ys))  # <-- CUT


class ODEClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.odefunc = ODEFunc()
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        traj = odeint(self.odefunc, x, torch.linspace(0.0, 1.0, 6))
        return self.head(traj[-1])


def run():
    torch.manual_seed(0)
    model = ODEClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
