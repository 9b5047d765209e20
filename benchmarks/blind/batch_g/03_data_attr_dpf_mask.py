"""Dynamic pruning with feedback, ResNet basic block: the forward applies the
pruning mask by writing `self.conv1.weight.data = torch.mul(self.conv1.weight,
self.mask1.weight)`. The product is computed, but storing it through .data
throws its graph away, so the learnable soft mask never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.layer1[0].mask1.weight"
EXPECT = "grad_none"


class Mask(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(shape))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.mask1 = Mask(self.conv1.weight.shape)
        self.mask2 = Mask(self.conv2.weight.shape)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        self.conv1.weight.data = torch.mul(self.conv1.weight, self.mask1.weight)  # <-- CUT
        out = F.relu(self.bn1(self.conv1(x)))
        self.conv2.weight.data = torch.mul(self.conv2.weight, self.mask2.weight)
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNetTiny(nn.Module):
    def __init__(self, n_cls=10):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.layer1 = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 16, stride=2))
        self.fc = nn.Linear(16, n_cls)

    def forward(self, x):
        x = F.relu(self.bn(self.stem(x)))
        x = self.layer1(x)
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def run():
    torch.manual_seed(0)
    model = ResNetTiny()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    x = torch.randn(4, 3, 16, 16)
    y = torch.tensor([0, 3, 5, 9])
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
