"""A bilinear layer keeps its weight in float64 for stability:
self.W = nn.Parameter(torch.randn(...)).double(). The .double() copy is a
non-leaf plain tensor (the Parameter itself is dropped), so model.W.grad is None.
"""
import torch
import torch.nn as nn

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.W"
EXPECT = "grad_none"


class Bilinear64(nn.Module):
    def __init__(self, d=5):
        super().__init__()
        self.W = nn.Parameter(torch.randn(d, d) * 0.1).double()  # <-- CUT
        self.bias = nn.Parameter(torch.zeros(1, dtype=torch.float64))

    def forward(self, a, b):
        return ((a.double() @ self.W) * b.double()).sum(-1) + self.bias


def run():
    torch.manual_seed(0)
    model = Bilinear64()
    a, b = torch.randn(7, 5), torch.randn(7, 5)
    y = torch.randn(7, dtype=torch.float64)
    loss = (model(a, b) - y).pow(2).mean()
    loss.backward()
    return {"model": model, "loss": loss}
