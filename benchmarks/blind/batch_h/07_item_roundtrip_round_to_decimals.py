"""Price regressor whose output must be rounded to 2 decimals for the business metric.
The user rounds with Python's round(pred.item(), 2) per sample and rebuilds a tensor with
requires_grad=True so backward runs; the loss then has no path to the regressor and its
weights never get a gradient (the thread asks how to round and still learn).
Thread: discuss.pytorch.org/t/torch-round-gradient/28628
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.net[0].weight"
EXPECT = "grad_none"


class PriceRegressor(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def round_prices(pred, decimals=2):
    out = []
    for p in pred:
        out.append(round(p.item(), decimals))  # <-- CUT
    return torch.tensor(out, requires_grad=True)


def run():
    torch.manual_seed(0)
    model = PriceRegressor()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.randn(8, 6)
    price = torch.rand(8) * 10
    pred = round_prices(model(x))
    loss = (pred - price).abs().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "pred": pred}
