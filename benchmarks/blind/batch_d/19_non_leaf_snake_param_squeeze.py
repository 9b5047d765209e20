"""Snake activation (x + 1/a * sin^2(a x)) with a learnable frequency a. When no
init value is given, a is sampled from an exponential distribution and
`.squeeze()` is applied outside Parameter(...), so self.a is a plain non-leaf
tensor: it is not registered, not in the optimizer, and a.grad stays None
(EdwardDixon/snake#2).
"""
import torch
import torch.nn as nn
from torch.nn import Parameter

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.act.a"
EXPECT = "grad_none"


class Snake(nn.Module):
    def __init__(self, in_features, a=None, trainable=True):
        super().__init__()
        self.in_features = in_features if isinstance(in_features, list) else [in_features]
        if a is not None:
            self.a = Parameter(torch.ones(self.in_features) * a)
        else:
            m = torch.distributions.exponential.Exponential(torch.tensor([0.1]))
            self.a = Parameter(m.rsample(self.in_features)).squeeze()  # <-- CUT
        self.a.requiresGrad = trainable  # set the training of `a` to true

    def forward(self, x):
        return x + (1.0 / (self.a + 1e-9)) * torch.pow(torch.sin(x * self.a), 2)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(1, 16)
        self.act = Snake(16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, t):
        return self.fc2(self.act(self.fc1(t)))


def run():
    torch.manual_seed(0)
    model = Regressor()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    t = torch.linspace(0, 6, 32).unsqueeze(1)
    y = torch.sin(t) + 0.1 * t
    loss = nn.functional.mse_loss(model(t), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
