"""Portfolio model trained with a custom "negative Sharpe ratio" loss. The loss helper
computes mean/std of the portfolio returns in numpy (for ddof=1 like pandas) and wraps the
result with torch.tensor(..., requires_grad=True), so backward runs but allocator.net[1].weight.grad is None.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "allocator.net[1].weight"
EXPECT = "grad_none"


class Allocator(nn.Module):
    def __init__(self, n_assets=5, lookback=10):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(n_assets * lookback, 32), nn.ReLU(),
                                 nn.Linear(32, n_assets))

    def forward(self, window):
        return torch.softmax(self.net(window), dim=-1)


def sharpe_loss(weights, next_returns, annualize=252):
    port = (weights * next_returns).sum(dim=1)
    r = port.detach().cpu().numpy()  # <-- CUT
    sharpe = np.sqrt(annualize) * r.mean() / (r.std(ddof=1) + 1e-8)
    return torch.tensor(-sharpe, dtype=torch.float32, requires_grad=True)


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    allocator = Allocator()
    opt = torch.optim.Adam(allocator.parameters(), lr=1e-3)
    prices = rng.normal(0.0005, 0.01, size=(64 + 11, 5)).astype(np.float32)
    windows = torch.from_numpy(np.stack([prices[i:i + 10] for i in range(64)]))
    next_ret = torch.from_numpy(prices[10:74])
    weights = allocator(windows)
    loss = sharpe_loss(weights, next_ret)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"allocator": allocator, "loss": loss, "weights": weights}
