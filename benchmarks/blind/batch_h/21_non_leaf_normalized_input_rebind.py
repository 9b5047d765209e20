"""Input-gradient attribution for a tabular model: the user marks the raw feature tensor
with requires_grad=True, then rebinds it with the standardisation x = (x - mean) / std
before the forward. As the forum answer explains, once requires_grad is set every op is
recorded, so the rebound x is a non-leaf and x.grad is None after backward.
Thread: discuss.pytorch.org/t/how-to-define-a-leaf-tensor-in-pytorch-0-4-1/28461
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "x"
EXPECT = "grad_none"


class TabularNet(nn.Module):
    def __init__(self, d=5):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


class Attributor:
    def __init__(self, model, mean, std):
        self.model, self.mean, self.std = model, mean, std

    def attribute(self, raw):
        x = raw.clone().requires_grad_(True)
        x = (x - self.mean) / self.std  # <-- CUT
        score = self.model(x).sum()
        score.backward()
        return x, x.grad


def run():
    torch.manual_seed(0)
    model = TabularNet()
    raw = torch.randn(4, 5) * 3 + 1
    attributor = Attributor(model, raw.mean(0), raw.std(0))
    x, attr = attributor.attribute(raw)
    return {"model": model, "x": x, "attr": attr}
