"""A gating block applies F.relu(..., inplace=True) to the output of a sigmoid
to "save memory". Sigmoid saves its output for backward, the in-place ReLU
bumps its version, and loss.backward() raises the in-place error.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SEGate(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.fc = nn.Linear(c, c)

    def forward(self, x):
        s = torch.sigmoid(self.fc(x.mean(dim=(2, 3))))
        s = F.relu(s - 0.1, inplace=False)
        g = torch.sigmoid(s)
        g = F.relu(g, inplace=True)  # <-- CUT
        return x * g[:, :, None, None]


def run():
    torch.manual_seed(0)
    block = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), SEGate(8))
    opt = torch.optim.SGD(block.parameters(), lr=0.1)
    x = torch.randn(2, 3, 5, 5)
    loss = block(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"block": block, "loss": loss}
