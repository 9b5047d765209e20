"""Control: a custom normalisation layer updates its running mean buffer in place
with batch statistics under torch.no_grad() and .detach(), and keeps using the
batch statistics for the output; the affine weight trains normally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.norm.weight"
EXPECT = "grad_ok"


class RunningNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.register_buffer("running_mean", torch.zeros(d))

    def forward(self, x):
        mu = x.mean(0)
        with torch.no_grad():
            self.running_mean.mul_(0.9).add_(0.1 * mu.detach())
        return (x - mu) * self.weight


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 6)
        self.norm = RunningNorm(6)
        self.out = nn.Linear(6, 2)

    def forward(self, x):
        return self.out(F.relu(self.norm(self.fc(x))))


def run():
    torch.manual_seed(0)
    model = Net()
    x, y = torch.randn(9, 5), torch.randint(0, 2, (9,))
    loss = F.cross_entropy(model(x), y)  # <-- CUT
    loss.backward()
    return {"model": model, "loss": loss}
