"""DCGAN discriminator: LeakyReLU(inplace=True) output is then scaled in place by a dropout-like
mask in forward; the in-place mul_ modifies the activation's saved output and backward raises.
Thread: pytorch GAN "one of the variables needed for gradient computation has been modified" (memory)."""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "D.fc1.weight"
EXPECT = "backward_error"


class Disc(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.act = nn.LeakyReLU(0.2, inplace=True)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x, mask):
        h = self.act(self.fc1(x))
        h.mul_(mask)  # <-- CUT
        return self.fc2(h)


def run():
    torch.manual_seed(0)
    D = Disc()
    mask = (torch.rand(4, 8) > 0.3).float()
    loss = nn.functional.softplus(-D(torch.randn(4, 6), mask)).mean()
    loss.backward()
    return {"D": D}
