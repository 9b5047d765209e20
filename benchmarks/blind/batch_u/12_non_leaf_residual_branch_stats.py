"""pytorch/pytorch#60456 setting (gradient variance of the two branches of a ResNet-like
block out = b1(x) + alpha * b2(x)): instead of hooks, the user stores the branch
outputs on the module in forward and reads `block.last_b2.grad` after backward to
compute the variance. Branch outputs are non-leaf tensors, so .grad is None."""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net.block.last_b2"
EXPECT = "grad_none"


class TwoBranch(nn.Module):
    def __init__(self, c=8, alpha=1.0):
        super().__init__()
        self.alpha = alpha
        self.b1 = nn.Sequential(nn.ReLU())
        self.b2 = nn.Sequential(nn.Conv2d(c, c, 3, padding=1, bias=False), nn.ReLU())

    def forward(self, x):
        self.last_b1 = self.b1(x)
        self.last_b2 = self.b2(x)  # <-- CUT
        return self.last_b1 + self.alpha * self.last_b2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.block = TwoBranch()
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        return self.head(self.block(self.stem(x)).mean((2, 3)))


def run():
    torch.manual_seed(0)
    net = Net()
    x = torch.randn(4, 3, 8, 8)
    y = torch.randint(0, 10, (4,))
    loss = nn.functional.cross_entropy(net(x), y)
    loss.backward()
    stats = {}
    for name in ("last_b1", "last_b2"):
        g = getattr(net.block, name).grad
        stats[name] = None if g is None else (g.var().item(), g.mean().item())
    return {"net": net, "stats": stats}
