"""A low-rank adapter builds its full weight in forward() and wraps it as
self.weight = nn.Parameter(self.A @ self.B) "so the optimizer sees it".
The Parameter is a fresh leaf without history, so A and B get no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "layer.A"
EXPECT = "grad_none"


class LowRank(nn.Module):
    def __init__(self, d=6, r=2):
        super().__init__()
        self.A = nn.Parameter(torch.randn(d, r) * 0.1)
        self.B = nn.Parameter(torch.randn(r, d) * 0.1)

    def forward(self, x):
        self.weight = nn.Parameter(self.A @ self.B)  # <-- CUT
        return F.linear(x, self.weight)


def run():
    torch.manual_seed(0)
    layer = LowRank()
    x, y = torch.randn(5, 6), torch.randn(5, 6)
    loss = F.mse_loss(layer(x), y)
    loss.backward()
    return {"layer": layer, "loss": loss}
