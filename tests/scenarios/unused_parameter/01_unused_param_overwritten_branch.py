"""A two-branch block computes the local branch into `out` and then overwrites
`out` with the global branch (a `+=` was meant). The local branch runs but its
result never reaches the loss, so its conv weight gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.local.weight"
EXPECT = "grad_none"


class TwoBranch(nn.Module):
    def __init__(self, c=6):
        super().__init__()
        self.local = nn.Conv2d(c, c, 3, padding=1)
        self.glob = nn.Conv2d(c, c, 1)
        self.fc = nn.Linear(c, 3)

    def forward(self, x):
        out = self.local(x)  # <-- CUT
        out = self.glob(x.mean(dim=(2, 3), keepdim=True)).expand_as(x)
        return self.fc(F.relu(out).mean(dim=(2, 3)))


def run():
    torch.manual_seed(0)
    model = TwoBranch()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(2, 6, 5, 5)
    y = torch.randint(0, 3, (2,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
