"""mmdetection-style RPNHead configured with num_convs=2. With more than one conv, rpn_conv becomes a
Sequential of ConvModules whose last module already ends in ReLU; forward() then still applies
F.relu(x, inplace=True), overwriting the ReLU output that ReluBackward0 saved, and loss.backward()
raises "one of the variables needed for gradient computation has been modified by an inplace operation".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class ConvModule(nn.Module):
    def __init__(self, cin, cout, k, padding=0, with_act=True):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=padding)
        self.activate = nn.ReLU() if with_act else None

    def forward(self, x):
        x = self.conv(x)
        return self.activate(x) if self.activate is not None else x


class RPNHead(nn.Module):
    def __init__(self, in_channels=8, feat_channels=8, num_anchors=3, num_convs=2):
        super().__init__()
        if num_convs > 1:
            self.rpn_conv = nn.Sequential(*[ConvModule(in_channels if i == 0 else feat_channels,
                                                       feat_channels, 3, padding=1)
                                            for i in range(num_convs)])
        else:
            self.rpn_conv = nn.Conv2d(in_channels, feat_channels, 3, padding=1)
        self.rpn_cls = nn.Conv2d(feat_channels, num_anchors, 1)
        self.rpn_reg = nn.Conv2d(feat_channels, num_anchors * 4, 1)

    def forward_single(self, x):
        x = self.rpn_conv(x)
        x = F.relu(x, inplace=True)  # <-- CUT
        return self.rpn_cls(x), self.rpn_reg(x)

    def forward(self, feats):
        return [self.forward_single(f) for f in feats]


def run():
    torch.manual_seed(0)
    head = RPNHead(num_convs=2)
    opt = torch.optim.SGD(head.parameters(), lr=0.02, momentum=0.9)
    feats = [torch.randn(2, 8, 8, 8), torch.randn(2, 8, 4, 4)]
    outs = head(feats)
    loss_cls = sum(F.binary_cross_entropy_with_logits(c, (torch.rand_like(c) > 0.8).float()) for c, _ in outs)
    loss_bbox = sum(F.smooth_l1_loss(r, torch.zeros_like(r)) for _, r in outs)
    loss = loss_cls + loss_bbox
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"head": head, "loss": loss}
