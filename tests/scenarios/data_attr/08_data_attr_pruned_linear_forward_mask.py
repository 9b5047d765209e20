"""Pruning implemented in a custom layer: forward multiplies the mask into
self.weight.data "to avoid tracking the mask in autograd". The product is a
plain tensor, so the pruned layer's weight never receives a gradient while
its bias does.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.body.weight"
EXPECT = "grad_none"


class PrunedLinear(nn.Linear):
    def __init__(self, d_in, d_out, sparsity=0.5):
        super().__init__(d_in, d_out)
        k = int(sparsity * self.weight.numel())
        thresh = self.weight.detach().abs().flatten().kthvalue(k).values
        self.register_buffer("mask", (self.weight.detach().abs() > thresh).float())

    def forward(self, x):
        w = self.weight.data * self.mask  # <-- CUT
        return F.linear(x, w, self.bias)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = PrunedLinear(12, 24)
        self.head = nn.Linear(24, 3)

    def forward(self, x):
        return self.head(F.gelu(self.body(x)))


def run():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(32, 12)
    y = torch.randint(0, 3, (32,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
