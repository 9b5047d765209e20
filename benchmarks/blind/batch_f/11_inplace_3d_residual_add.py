"""Reproduces iMED-Lab/ER-Net#3: the 3D residual block of the vessel segmentation net ends
with `out += residual` right after a ReLU. ReLU saved its output for backward; the in-place
add bumps its version, and loss.backward() raises "... output 0 of ReluBackward0, is at
version 1; expected version 0". The PR replaces it with `out = out + residual`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class ResEncoder3d(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv1 = nn.Conv3d(in_channels, out_channels, 3, padding=1)
        self.bn1 = nn.BatchNorm3d(out_channels)
        self.conv2 = nn.Conv3d(out_channels, out_channels, 3, padding=1)
        self.bn2 = nn.BatchNorm3d(out_channels)
        self.relu = nn.ReLU(inplace=False)
        self.conv1x1 = nn.Conv3d(in_channels, out_channels, 1)

    def forward(self, x):
        residual = self.conv1x1(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out += residual  # <-- CUT
        return out


class ERNetLite(nn.Module):
    def __init__(self, classes=1, channels=1):
        super().__init__()
        self.enc_input = ResEncoder3d(channels, 4)
        self.encoder1 = ResEncoder3d(4, 8)
        self.down = nn.MaxPool3d(2)
        self.up = nn.ConvTranspose3d(8, 4, 2, stride=2)
        self.final = nn.Conv3d(8, classes, 1)

    def forward(self, x):
        e0 = self.enc_input(x)
        e1 = self.encoder1(self.down(e0))
        d0 = torch.cat([self.up(e1), e0], dim=1)
        return self.final(d0)


def dice_bce(logits, target, eps=1.0):
    prob = torch.sigmoid(logits)
    inter = (prob * target).sum()
    dice = 1 - (2 * inter + eps) / (prob.sum() + target.sum() + eps)
    return dice + F.binary_cross_entropy_with_logits(logits, target)


def run():
    torch.manual_seed(0)
    net = ERNetLite()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=5e-4)
    volume = torch.randn(2, 1, 8, 8, 8)
    label = (torch.rand(2, 1, 8, 8, 8) > 0.8).float()
    pred = net(volume)
    loss = dice_bce(pred, label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"net": net, "loss": loss}
