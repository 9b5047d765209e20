"""d2l "Custom Layers" MyLinear uses self.weight.data and self.bias.data in
forward() (fixed by d2l-ai/d2l-en#2600). Stacking two of them and training the
net fails: loss.backward() raises "element 0 of tensors does not require grad".
Source: https://github.com/d2l-ai/d2l-en/pull/2600
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class MyLinear(nn.Module):
    def __init__(self, in_units, units):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_units, units))
        self.bias = nn.Parameter(torch.randn(units,))

    def forward(self, X):
        linear = torch.matmul(X, self.weight.data) + self.bias.data  # <-- CUT
        return F.relu(linear)


def train_epoch(net, X, y, trainer, loss_fn):
    for i in range(0, X.shape[0], 4):
        l = loss_fn(net(X[i:i + 4]), y[i:i + 4])
        trainer.zero_grad()
        l.backward()
        trainer.step()


def run():
    torch.manual_seed(0)
    net = nn.Sequential(MyLinear(64, 8), MyLinear(8, 1))
    trainer = torch.optim.SGD(net.parameters(), lr=0.03)
    X = torch.rand(8, 64)
    y = torch.rand(8, 1)
    train_epoch(net, X, y, trainer, nn.MSELoss())
    return {"net": net}
