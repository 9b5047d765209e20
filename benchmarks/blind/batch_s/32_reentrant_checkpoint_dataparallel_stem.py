"""Memory-saving loop for a DataParallel-style wrapper (run on CPU, so the
wrapper just forwards to .module): the stem is wrapped in
checkpoint(..., use_reentrant=True) and its input is the raw image batch, which
does not require grad. The stem weights get no gradient; the later blocks do."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.module.stem[0].weight"
EXPECT = "grad_none"


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        h = checkpoint(self.stem, x, use_reentrant=True)  # <-- CUT
        h = self.block(h)
        return self.fc(h.mean(dim=(2, 3)))


class CPUDataParallel(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, *a):
        return self.module(*a)


def run():
    torch.manual_seed(0)
    model = CPUDataParallel(Backbone())
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(2, 3, 6, 6), torch.randint(0, 4, (2,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
