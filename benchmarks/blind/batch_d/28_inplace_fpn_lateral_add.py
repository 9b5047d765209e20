"""Multi-class object counting with an FPN head: the top-down pathway adds the
upsampled coarser level into the finer one with
`laterals[i - 1] += F.interpolate(...)`. The laterals are ReLU outputs that
ReLU saved for backward, so loss.backward() raises "modified by an inplace
operation ... output 0 of ReluBackward0" (lyongo/NWPU-MOC#4).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class ConvModule(nn.Module):
    def __init__(self, c_in, c_out, k=1):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, k, padding=k // 2)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.conv(x))


class FPN_Head(nn.Module):
    def __init__(self, in_channels=(8, 16, 32), out_channels=8):
        super().__init__()
        self.lateral_convs = nn.ModuleList([ConvModule(c, out_channels) for c in in_channels])
        self.fpn_convs = nn.ModuleList([ConvModule(out_channels, out_channels, 3) for _ in in_channels])

    def forward(self, inputs):
        laterals = [conv(inputs[i]) for i, conv in enumerate(self.lateral_convs)]
        for i in range(len(laterals) - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode="nearest")  # <-- CUT
        outs = [self.fpn_convs[i](laterals[i]) for i in range(len(laterals))]
        return outs[0]


class CountingNet(nn.Module):
    def __init__(self, n_cls=3):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.c2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.c3 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.head = FPN_Head()
        self.density = nn.Conv2d(8, n_cls, 1)

    def forward(self, x):
        f1 = F.relu(self.c1(x))
        f2 = F.relu(self.c2(f1))
        f3 = F.relu(self.c3(f2))
        return F.relu(self.density(self.head([f1, f2, f3])))


def run():
    torch.manual_seed(0)
    net = CountingNet()
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    img = torch.randn(2, 3, 32, 32)
    gt_density = torch.rand(2, 3, 16, 16)
    loss = F.mse_loss(net(img), gt_density)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"net": net, "loss": loss}
