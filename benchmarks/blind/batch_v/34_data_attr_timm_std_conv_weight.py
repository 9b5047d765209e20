"""A user re-implementation of timm's StdConv2d (weight standardization for BiT/NF nets) that
standardizes `self.weight.data` in forward to "avoid autograd overhead". The conv output is
computed from a tensor with no graph to the weight, so the conv weight gets no grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.stem.conv.weight"
EXPECT = "grad_none"


class StdConv2d(nn.Conv2d):
    def __init__(self, *args, eps=1e-6, **kwargs):
        super().__init__(*args, **kwargs)
        self.eps = eps

    def forward(self, x):
        w = self.weight.data  # <-- CUT
        w = (w - w.mean(dim=(1, 2, 3), keepdim=True)) / (w.std(dim=(1, 2, 3), keepdim=True) + self.eps)
        return F.conv2d(x, w, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = StdConv2d(3, 8, 3, padding=1, bias=False)
        self.norm = nn.GroupNorm(2, 8)

    def forward(self, x):
        return F.relu(self.norm(self.conv(x)))


class BiTLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = Stem()
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        return self.head(self.stem(x).mean((2, 3)))


def run():
    torch.manual_seed(0)
    model = BiTLike()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(4, 3, 8, 8), torch.tensor([0, 1, 2, 3])
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
