"""pytorch/pytorch#20089 ("allocating a nn.Parameter on gpu inside a nn.Module makes it
not to be enlisted as network parameter", self.w = nn.Parameter(torch.ones(10)).cuda()),
CPU version with float64: the per-channel gain is created as nn.Parameter(...).double()
in __init__, so self.gain is a non-leaf copy, not a registered parameter; the loss
trains the linear layer but model.gain.grad is None."""
import torch
import torch.nn as nn

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.gain"
EXPECT = "grad_none"


class Calibrated(nn.Module):
    def __init__(self, d=10):
        super().__init__()
        self.lin = nn.Linear(d, d).double()
        self.gain = nn.Parameter(torch.ones(d)).double()  # <-- CUT

    def forward(self, x):
        return self.lin(x) * self.gain


def run():
    torch.manual_seed(0)
    model = Calibrated()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 10, dtype=torch.float64)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    names = [n for n, _ in model.named_parameters()]
    return {"model": model, "names": names, "loss": loss}
