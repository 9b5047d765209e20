"""Transfer learning: the whole backbone is frozen with requires_grad_(False) and
then the last block is "unfrozen" with `model.block2.requires_grad = True`,
which only sets a plain attribute on the nn.Module. block2's conv weight
still has requires_grad=False and no .grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.block2[0].weight"
EXPECT = "grad_none"


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.block2 = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        h = self.block2(self.block1(x))
        return self.head(h.mean(dim=(2, 3)))


def run():
    torch.manual_seed(0)
    model = Backbone()
    model.requires_grad_(False)  # <-- CUT
    model.block2.requires_grad = True
    model.head = nn.Linear(8, 5)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=0.01)
    x = torch.randn(4, 3, 8, 8)
    y = torch.randint(0, 5, (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
