"""Quantile regression for demand forecasting: the pinball loss helper was written
with `reduction="none"` semantics for per-horizon plots, and the trainer calls
`loss.backward()` on the (batch, horizon) tensor. backward raises "grad can be
implicitly created only for scalar outputs".
"""
import torch
import torch.nn as nn

CAUSE = "other:nonscalar_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Forecaster(nn.Module):
    def __init__(self, lookback=12, horizon=3, n_q=3):
        super().__init__()
        self.horizon, self.n_q = horizon, n_q
        self.net = nn.Sequential(nn.Linear(lookback, 32), nn.ReLU(), nn.Linear(32, horizon * n_q))

    def forward(self, x):
        return self.net(x).view(-1, self.horizon, self.n_q)


def pinball_per_horizon(pred, y, quantiles):
    q = torch.tensor(quantiles)
    diff = y.unsqueeze(-1) - pred
    return torch.maximum(q * diff, (q - 1) * diff).mean(-1)  # <-- CUT


class Trainer:
    def __init__(self, quantiles=(0.1, 0.5, 0.9)):
        self.model = Forecaster()
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.quantiles = list(quantiles)

    def step(self, x, y):
        loss = pinball_per_horizon(self.model(x), y, self.quantiles)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    tr = Trainer()
    loss = tr.step(torch.randn(8, 12), torch.randn(8, 3))
    return {"tr": tr, "loss": loss}
