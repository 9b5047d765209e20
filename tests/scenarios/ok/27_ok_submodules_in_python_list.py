"""Control: the hidden layers are kept in a plain Python list (`self.layers = [...]`)
instead of `nn.ModuleList`. The optimizer built from `model.parameters()` misses
them, but autograd still computes their gradients: `.grad` is set and nonzero;
they are just never updated.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.layers[0].weight"
EXPECT = "grad_ok"


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(6, 6) for _ in range(3)]
        self.out = nn.Linear(6, 2)

    def forward(self, x):
        for layer in self.layers:
            x = F.relu(layer(x))
        return self.out(x)


def run():
    torch.manual_seed(0)
    model = MLP()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
    loss = F.cross_entropy(model(x), y)  # <-- CUT
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "optimizer": optimizer, "loss": loss}
