"""Single-stage (SSD-like, no neck) detector where the user edits the detector init to
freeze the backbone for fine-tuning and, in the same edit, also freezes bbox_head. With
both frozen, no parameter in the detector requires grad, the classification and box
losses have no grad_fn, and the runner's loss.backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class VGGLite(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))

    def forward(self, x):
        return [self.features(x)]


class SSDHead(nn.Module):
    def __init__(self, in_ch=32, num_anchors=2, num_classes=3):
        super().__init__()
        self.num_classes = num_classes
        self.cls_convs = nn.ModuleList([nn.Conv2d(in_ch, num_anchors * (num_classes + 1), 3, padding=1)])
        self.reg_convs = nn.ModuleList([nn.Conv2d(in_ch, num_anchors * 4, 3, padding=1)])

    def forward(self, feats):
        cls = [conv(f) for conv, f in zip(self.cls_convs, feats)]
        reg = [conv(f) for conv, f in zip(self.reg_convs, feats)]
        return cls, reg

    def loss(self, cls_scores, bbox_preds, labels, bbox_targets):
        cls = cls_scores[0].permute(0, 2, 3, 1).reshape(-1, self.num_classes + 1)
        reg = bbox_preds[0].permute(0, 2, 3, 1).reshape(-1, 4)
        return {"loss_cls": F.cross_entropy(cls, labels),
                "loss_bbox": F.smooth_l1_loss(reg, bbox_targets)}


class SingleStageDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = VGGLite()
        self.bbox_head = SSDHead()
        for v in self.backbone.parameters():
            v.requires_grad = False
        for v in self.bbox_head.parameters():
            v.requires_grad = False  # <-- CUT

    def forward_train(self, img, labels, bbox_targets):
        cls_scores, bbox_preds = self.bbox_head(self.backbone(img))
        return self.bbox_head.loss(cls_scores, bbox_preds, labels, bbox_targets)


def run():
    torch.manual_seed(0)
    model = SingleStageDetector()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    img = torch.randn(2, 3, 32, 32)
    n = 2 * 8 * 8 * 2
    labels = torch.randint(0, 4, (n,))
    bbox_targets = torch.randn(n, 4)
    losses = model.forward_train(img, labels, bbox_targets)
    loss = sum(losses.values())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "losses": losses}
