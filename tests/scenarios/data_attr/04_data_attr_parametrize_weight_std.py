"""Weight standardization added with torch.nn.utils.parametrize. The
parametrization normalizes `W.data` (copied from an old in-place version of the
trick), so the standardized weight is a constant: the layer's underlying
`parametrizations.weight.original` gets no gradient while the bias still trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.conv2.parametrizations.weight.original"
EXPECT = "grad_none"


class WeightStandardize(nn.Module):
    def forward(self, W):
        w = W.data  # <-- CUT
        mean = w.mean(dim=(1, 2, 3), keepdim=True)
        std = w.std(dim=(1, 2, 3), keepdim=True) + 1e-5
        return (w - mean) / std


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.gn = nn.GroupNorm(2, 8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.gn(self.conv2(x)))
        return self.fc(x.mean(dim=(2, 3)))


def run():
    torch.manual_seed(0)
    model = SmallCNN()
    parametrize.register_parametrization(model.conv2, "weight", WeightStandardize())
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(6, 3, 8, 8)
    y = torch.randint(0, 4, (6,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
