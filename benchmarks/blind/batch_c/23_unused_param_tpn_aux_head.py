"""mmaction2 Recognizer2D with a TPN neck configured with an auxiliary head. The neck
returns (features, aux_loss), but the recognizer unpacks x, _ = self.neck(x, labels),
so the auxiliary classification loss is computed and thrown away: the backbone and the
main head train, the auxiliary head's parameters get no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.neck.aux_head.fc.weight"
EXPECT = "grad_none"


class AuxHead(nn.Module):
    def __init__(self, in_ch, num_classes, loss_weight=0.5):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, in_ch, 3, padding=1)
        self.fc = nn.Linear(in_ch, num_classes)
        self.loss_weight = loss_weight

    def forward(self, x, target=None):
        x = F.relu(self.conv(x)).mean(dim=(2, 3))
        if target is None:
            return {}
        return {"loss_aux": self.loss_weight * F.cross_entropy(self.fc(x), target)}


class TPN(nn.Module):
    def __init__(self, in_channels=(16, 32), out_channels=32, num_classes=6):
        super().__init__()
        self.lateral = nn.ModuleList([nn.Conv2d(c, out_channels, 1) for c in in_channels])
        self.fusion = nn.Conv2d(out_channels * len(in_channels), out_channels, 1)
        self.aux_head = AuxHead(in_channels[-2], num_classes)

    def forward(self, x, target=None):
        loss_aux = self.aux_head(x[-2], target)
        size = x[-1].shape[-2:]
        outs = [F.adaptive_avg_pool2d(lat(f), size) for lat, f in zip(self.lateral, x)]
        return self.fusion(torch.cat(outs, dim=1)), loss_aux


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU())
        self.stage2 = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU())

    def forward(self, x):
        c1 = self.stage1(x)
        return [c1, self.stage2(c1)]


class Recognizer2D(nn.Module):
    def __init__(self, num_classes=6):
        super().__init__()
        self.backbone = Backbone()
        self.neck = TPN(num_classes=num_classes)
        self.cls_head = nn.Linear(32, num_classes)

    def forward_train(self, imgs, labels):
        x = self.backbone(imgs)
        x, _ = self.neck(x, labels.squeeze())  # <-- CUT
        cls_score = self.cls_head(x.mean(dim=(2, 3)))
        return {"loss_cls": F.cross_entropy(cls_score, labels.squeeze())}


def run():
    torch.manual_seed(0)
    model = Recognizer2D()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    imgs = torch.randn(4, 3, 16, 16)
    labels = torch.randint(0, 6, (4, 1))
    losses = model.forward_train(imgs, labels)
    loss = sum(losses.values())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "losses": losses, "loss": loss}
