"""CycleGAN depth-map ResidualBlock variant: the residual branch now ends in
nn.ReLU(inplace=True) and forward does out = self.res(x); out += x. The += writes
into ReLU's output, which ReLU saved for backward, so G's loss.backward() raises
"modified by an inplace operation".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class ResidualBlock(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.res = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(in_channels, in_channels, 3),
                                 nn.InstanceNorm2d(in_channels), nn.ReLU(inplace=True),
                                 nn.ReflectionPad2d(1), nn.Conv2d(in_channels, in_channels, 3),
                                 nn.InstanceNorm2d(in_channels), nn.ReLU(inplace=True))

    def forward(self, x):
        out = self.res(x)
        out += x  # <-- CUT
        return out


class GeneratorResNet(nn.Module):
    def __init__(self, ch=4, n_blocks=2):
        super().__init__()
        self.head = nn.Conv2d(1, ch, 3, padding=1)
        self.blocks = nn.Sequential(*[ResidualBlock(ch) for _ in range(n_blocks)])
        self.tail = nn.Conv2d(ch, 1, 3, padding=1)

    def forward(self, x):
        return torch.tanh(self.tail(self.blocks(self.head(x))))


def run():
    torch.manual_seed(0)
    G_AB, G_BA = GeneratorResNet(), GeneratorResNet()
    opt = torch.optim.Adam(list(G_AB.parameters()) + list(G_BA.parameters()), lr=2e-4)
    real_A, real_B = torch.rand(1, 1, 8, 8), torch.rand(1, 1, 8, 8)
    fake_B = G_AB(real_A)
    rec_A = G_BA(fake_B)
    loss = F.l1_loss(rec_A, real_A) * 10 + F.l1_loss(G_BA(real_A), real_A) * 5
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"G_AB": G_AB}
