"""Pre-activation style residual MLP block: the author applies x.relu_() to the
skip input "to save memory" after it was already fed to fc1, which saved it
for the weight gradient. backward() raises: a variable needed for gradient
computation has been modified by an inplace operation.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.stem.weight"
EXPECT = "backward_error"


class ResBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, d)
        self.fc2 = nn.Linear(d, d)

    def forward(self, x):
        out = self.fc2(F.relu(self.fc1(x)))
        x.relu_()  # <-- CUT
        return out + x


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(8, 16)
        self.block = ResBlock(16)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.block(self.stem(x)))


def run():
    torch.manual_seed(0)
    model = Model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(6, 8)
    y = torch.randint(0, 3, (6,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
