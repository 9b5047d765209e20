"""Reproduces osmr/imgclsmob#13: Xception-style blocks keep `self.activ = nn.ReLU(inplace=True)`
and apply it to the block input after the skip branch (a 1x1 conv) has already used that input.
The convolution saved the input for its weight gradient, the in-place ReLU overwrites it, and
loss.backward() raises "modified by an inplace operation".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class DwsConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.dw = nn.Conv2d(cin, cin, 3, padding=1, groups=cin, bias=False)
        self.pw = nn.Conv2d(cin, cout, 1, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return self.bn(self.pw(self.dw(x)))


class XceptionUnit(nn.Module):
    def __init__(self, cin, cout, stride, start_with_relu=True):
        super().__init__()
        self.resize_identity = cin != cout or stride != 1
        if self.resize_identity:
            self.identity_conv = nn.Conv2d(cin, cout, 1, stride=stride, bias=False)
            self.identity_bn = nn.BatchNorm2d(cout)
        self.start_with_relu = start_with_relu
        self.activ = nn.ReLU(inplace=True)
        self.conv1 = DwsConv(cin, cout)
        self.conv2 = DwsConv(cout, cout)
        self.pool = nn.MaxPool2d(3, stride=stride, padding=1) if stride != 1 else nn.Identity()

    def forward(self, x):
        if self.resize_identity:
            identity = self.identity_bn(self.identity_conv(x))
        else:
            identity = x
        if self.start_with_relu:
            x = self.activ(x)  # <-- CUT
        x = self.conv1(x)
        x = self.conv2(F.relu(x))
        x = self.pool(x)
        return x + identity


class TinyXception(nn.Module):
    def __init__(self, n_cls=5):
        super().__init__()
        self.init_block = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8))
        self.stage1 = XceptionUnit(8, 16, stride=2)
        self.stage2 = XceptionUnit(16, 16, stride=1)
        self.output = nn.Linear(16, n_cls)

    def forward(self, x):
        x = self.init_block(x)
        x = self.stage2(self.stage1(x))
        return self.output(x.mean(dim=(2, 3)))


def run():
    torch.manual_seed(0)
    model = TinyXception().train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    images = torch.randn(2, 3, 8, 8)
    target = torch.tensor([1, 3])
    loss = F.cross_entropy(model(images), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
