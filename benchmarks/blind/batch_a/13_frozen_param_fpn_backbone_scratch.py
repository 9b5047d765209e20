"""Faster R-CNN trained from scratch (pytorch/vision#2160): the ResNet-FPN
backbone builder hard-codes freezing of every layer except layer2-4, even when
no pretrained weights are loaded. The stem and layer1 keep their random init:
backbone.body.conv1.weight.grad is None after backward().
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.backbone.body.conv1.weight"
EXPECT = "grad_none"


class ResNetBody(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.layer1 = nn.Conv2d(8, 8, 3, padding=1)
        self.layer2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.layer3 = nn.Conv2d(16, 16, 3, stride=2, padding=1)
        self.layer4 = nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, x):
        x = F.relu(self.layer1(F.relu(self.conv1(x))))
        c3 = F.relu(self.layer2(x))
        c4 = F.relu(self.layer3(c3))
        return F.relu(self.layer4(c4))


class BackboneWithFPN(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body
        self.fpn = nn.Conv2d(16, 16, 1)

    def forward(self, x):
        return self.fpn(self.body(x))


def resnet_fpn_backbone(pretrained=False):
    body = ResNetBody()
    for name, parameter in body.named_parameters():
        if 'layer2' not in name and 'layer3' not in name and 'layer4' not in name:
            parameter.requires_grad_(False)  # <-- CUT
    return BackboneWithFPN(body)


class FasterRCNN(nn.Module):
    def __init__(self, backbone, num_classes=4):
        super().__init__()
        self.backbone = backbone
        self.cls_head = nn.Conv2d(16, num_classes, 1)
        self.box_head = nn.Conv2d(16, 4, 1)

    def forward(self, images):
        f = self.backbone(images)
        return self.cls_head(f), self.box_head(f)


def run():
    torch.manual_seed(0)
    model = FasterRCNN(resnet_fpn_backbone(pretrained=False))
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=0.01, momentum=0.9)
    images = torch.randn(2, 3, 32, 32)
    cls_t = torch.randint(0, 4, (2, 4, 4))
    box_t = torch.randn(2, 4, 4, 4)
    cls_out, box_out = model(images)
    loss = F.cross_entropy(cls_out, cls_t) + F.smooth_l1_loss(box_out, box_t)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "optimizer": optimizer, "loss": loss}
