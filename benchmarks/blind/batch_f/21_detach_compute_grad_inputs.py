"""Adapted from pytorch/pytorch#91529: a `compute_grad` helper applies `.clone().detach()` to its
input and to the model output ("so they are disassociated from the previous model") before
computing a finite-difference derivative of the network's prediction. The residual has no
grad_fn, and `dy.sum().backward()` raises "does not require grad and does not have a grad_fn".
"""
import torch
import torch.nn as nn

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Net(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(),
                                    nn.Linear(hidden, hidden), nn.Tanh(),
                                    nn.Linear(hidden, 1))

    def forward(self, t):
        return self.layers(t)


def compute_grad(y, t):
    t = t.clone().detach().to(torch.float64)
    y = y.clone().detach().to(torch.float64)  # <-- CUT
    dy = (y[2:] - y[:-2]) / (t[2:] - t[:-2])
    return dy, t[1:-1]


def run():
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    t = torch.linspace(0, 2, 21).unsqueeze(1)
    y = model(t)
    dy, t_mid = compute_grad(y, t)
    residual = dy + t_mid * 2.0          # ODE: y' = -2 t
    ic = (y[0] - 1.0) ** 2
    optimizer.zero_grad()
    (residual ** 2).sum().backward()
    optimizer.step()
    return {"model": model, "dy": dy, "ic": ic}
