"""Multi-quantile forecaster: the pinball loss is computed per quantile in a loop
and the list is packed with `torch.tensor(per_q)` before averaging. The copy has
no graph, so `loss.backward()` raises "element 0 of tensors does not require
grad and does not have a grad_fn".
"""
import torch
import torch.nn as nn

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

QUANTILES = [0.1, 0.5, 0.9]


class QuantileMLP(nn.Module):
    def __init__(self, d_in=8, horizon=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU())
        self.heads = nn.ModuleList(nn.Linear(32, horizon) for _ in QUANTILES)

    def forward(self, x):
        h = self.body(x)
        return torch.stack([hd(h) for hd in self.heads], dim=-1)


def pinball(pred, y, q):
    diff = y - pred
    return torch.maximum(q * diff, (q - 1) * diff).mean()


class QuantileLoss:
    def __init__(self, quantiles):
        self.quantiles = quantiles

    def __call__(self, pred, y):
        per_q = [pinball(pred[..., i], y, q) for i, q in enumerate(self.quantiles)]
        return torch.tensor(per_q).mean()  # <-- CUT


def run():
    torch.manual_seed(0)
    model = QuantileMLP()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    crit = QuantileLoss(QUANTILES)
    x, y = torch.randn(16, 8), torch.randn(16, 4)
    loss = crit(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
