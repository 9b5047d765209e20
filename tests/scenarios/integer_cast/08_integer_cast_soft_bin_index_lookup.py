"""A network predicts a value in [0, 1] which is turned into a bin index with
(p * K).to(torch.int64) to look up a learnable table. Only the table learns;
the network's first layer gets no gradient.
"""
import torch
import torch.nn as nn

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net[0].weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    K = 10
    net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1), nn.Sigmoid())
    table = nn.Parameter(torch.linspace(0, 1, K))
    x, y = torch.randn(16, 4), torch.rand(16)
    p = net(x).squeeze(1)
    idx = (p * K).to(torch.int64).clamp(max=K - 1)  # <-- CUT
    pred = table[idx]
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    return {"net": net, "table": table, "loss": loss}
