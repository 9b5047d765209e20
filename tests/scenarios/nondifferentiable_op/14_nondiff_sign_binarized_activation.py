"""Binarized neural network from a blog post: hidden activations are binarized
with `torch.sign(x)` but the straight-through estimator was left out. The
derivative of sign is zero everywhere, so the first layer's gradient is all zeros.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.weight"
EXPECT = "grad_zero"


class BinaryMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.bn = nn.BatchNorm1d(32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.bn(self.fc1(x))
        x = torch.sign(x)  # <-- CUT
        return self.fc2(x)


def run():
    torch.manual_seed(0)
    model = BinaryMLP()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(16, 16), torch.randint(0, 10, (16,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
