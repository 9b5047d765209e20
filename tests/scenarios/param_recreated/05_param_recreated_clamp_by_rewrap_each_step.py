"""A learnable mixing weight alpha is kept in [0, 1] by re-wrapping it after
every optimizer step: `model.alpha = nn.Parameter(model.alpha.clamp(0.0, 1.0))`.
From the second step on the forward uses the new Parameter while the optimizer
still holds the first one, whose .grad is None after the second backward.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[1]['params'][0]"
EXPECT = "grad_none"


class Blend(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
        self.b = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2))
        self.alpha = nn.Parameter(torch.tensor(0.5))

    def forward(self, x):
        return self.alpha * self.a(x) + (1 - self.alpha) * self.b(x)


def run():
    torch.manual_seed(0)
    model = Blend()
    opt = torch.optim.SGD([
        {"params": [*model.a.parameters(), *model.b.parameters()]},
        {"params": [model.alpha], "lr": 0.5},
    ], lr=0.05)
    for step in range(2):
        x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.alpha = nn.Parameter(model.alpha.clamp(0.0, 1.0))  # <-- CUT
    return {"model": model, "opt": opt, "loss": loss}
