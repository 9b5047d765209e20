"""CDPN-style rotation head trained with a train.py written from test.py: the x/y/z
coordinate bins are decoded with torch.argmax inside a torch.stack, re-mapped and
normalised with .float(), and the coordinate loss is taken on the decoded map. argmax
has no gradient, nothing in the loss requires grad, and loss.backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

COOR_BIN = 16


class RotHead(nn.Module):
    def __init__(self, in_ch=16):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(in_ch, 32, 3, padding=1), nn.ReLU())
        self.coor_x = nn.Conv2d(32, COOR_BIN + 1, 1)
        self.coor_y = nn.Conv2d(32, COOR_BIN + 1, 1)
        self.coor_z = nn.Conv2d(32, COOR_BIN + 1, 1)
        self.mask = nn.Conv2d(32, 1, 1)

    def forward(self, feat):
        h = self.features(feat)
        return self.coor_x(h), self.coor_y(h), self.coor_z(h), self.mask(h)


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU())

    def forward(self, x):
        return self.conv(x)


def run():
    torch.manual_seed(0)
    backbone, rot_head = Backbone(), RotHead()
    params = list(backbone.parameters()) + list(rot_head.parameters())
    optimizer = torch.optim.RMSprop(params, lr=1e-4)
    inp = torch.randn(2, 3, 32, 32)
    gt_coor = torch.rand(2, 3, 16, 16) * 2 - 1
    gt_mask = (torch.rand(2, 1, 16, 16) > 0.3).float()

    output_coor_x_, output_coor_y_, output_coor_z_, output_mask = rot_head(backbone(inp))
    output_coor_ = torch.stack([torch.argmax(output_coor_x_, dim=1), torch.argmax(output_coor_y_, dim=1), torch.argmax(output_coor_z_, dim=1)], dim=1)  # <-- CUT
    output_coor_[output_coor_ == COOR_BIN] = 0
    output_coor_ = 2.0 * output_coor_.float() / (COOR_BIN - 1.0) - 1.0
    loss_coor = F.l1_loss(output_coor_ * gt_mask, gt_coor * gt_mask)
    optimizer.zero_grad()
    loss_coor.backward()
    optimizer.step()
    return {"backbone": backbone, "rot_head": rot_head, "loss": loss_coor}
