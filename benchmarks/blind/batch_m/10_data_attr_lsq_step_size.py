"""Quantization-aware training with an LSQ-style learnable step size. Rounding uses
a correct straight-through estimator (a deliberate `.detach()`), so the weights
train. The quantizer reads the step through `self.step.data` "to keep it out of the
graph", so the step size never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.quant.step"
EXPECT = "grad_none"


def round_ste(x):
    return x + (torch.round(x) - x).detach()


class LSQQuantizer(nn.Module):
    def __init__(self, bits=4, init_step=0.05):
        super().__init__()
        self.qmin, self.qmax = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        self.step = nn.Parameter(torch.tensor(init_step))

    def forward(self, w):
        s = self.step.data  # <-- CUT
        return torch.clamp(round_ste(w / s), self.qmin, self.qmax) * s


class QATLinear(nn.Linear):
    def __init__(self, in_f, out_f, bits=4):
        super().__init__(in_f, out_f)
        self.quant = LSQQuantizer(bits)

    def forward(self, x):
        return F.linear(x, self.quant(self.weight), self.bias)


class QATNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = QATLinear(16, 32)
        self.fc2 = QATLinear(32, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def run():
    torch.manual_seed(0)
    model = QATNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y = torch.randn(32, 16), torch.randint(0, 10, (32,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
