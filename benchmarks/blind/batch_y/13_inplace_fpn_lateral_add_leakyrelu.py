"""FPN neck with act_cfg=LeakyReLU: each lateral ConvModule ends in an in-place LeakyReLU, which saves
its output for backward. The top-down pathway then does laterals[i - 1] += F.interpolate(laterals[i]),
modifying that saved output, so backward raises "one of the variables needed for gradient
computation has been modified by an inplace operation" (the output of the in-place LeakyReLU).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class ConvModule(nn.Module):
    def __init__(self, cin, cout, k, padding=0, act_cfg=None):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=padding)
        self.act = nn.LeakyReLU(0.1, inplace=True) if act_cfg == "LeakyReLU" else None

    def forward(self, x):
        x = self.conv(x)
        return self.act(x) if self.act is not None else x


class FPN(nn.Module):
    def __init__(self, in_channels=(8, 16, 32), out_channels=8, act_cfg="LeakyReLU"):
        super().__init__()
        self.lateral_convs = nn.ModuleList([ConvModule(c, out_channels, 1, act_cfg=act_cfg) for c in in_channels])
        self.fpn_convs = nn.ModuleList([ConvModule(out_channels, out_channels, 3, padding=1, act_cfg=act_cfg)
                                        for _ in in_channels])
        self.upsample_cfg = dict(scale_factor=2, mode="nearest")

    def forward(self, inputs):
        laterals = [conv(inputs[i]) for i, conv in enumerate(self.lateral_convs)]
        for i in range(len(laterals) - 1, 0, -1):
            laterals[i - 1] += F.interpolate(laterals[i], **self.upsample_cfg)  # <-- CUT
        return [self.fpn_convs[i](laterals[i]) for i in range(len(laterals))]


class Head(nn.Module):
    def __init__(self, c=8, num_classes=4):
        super().__init__()
        self.cls = nn.Conv2d(c, num_classes, 1)

    def forward(self, feats):
        return [self.cls(f) for f in feats]


def run():
    torch.manual_seed(0)
    neck, head = FPN(), Head()
    opt = torch.optim.SGD(list(neck.parameters()) + list(head.parameters()), lr=0.01, momentum=0.9)
    inputs = [torch.randn(2, 8, 16, 16), torch.randn(2, 16, 8, 8), torch.randn(2, 32, 4, 4)]
    outs = head(neck(inputs))
    loss = sum(F.binary_cross_entropy_with_logits(o, torch.zeros_like(o)) for o in outs)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"neck": neck, "head": head, "loss": loss}
