"""Two-stage 3D/2D detector modelled on PartA2 (open-mmlab/mmdetection3d#488,
"why find_unused_parameters=True"): early in training no RPN proposal passes the
score threshold and forward() returns the RPN losses before the RoI head runs.
The RoI head's parameters are unused in that step: roi_head.fc.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.roi_head.fc.weight"
EXPECT = "grad_none"


class RoIHead(nn.Module):
    def __init__(self, d=8, n_cls=3):
        super().__init__()
        self.fc = nn.Linear(d, 16)
        self.cls = nn.Linear(16, n_cls)

    def forward(self, roi_feats):
        return self.cls(F.relu(self.fc(roi_feats)))


class TwoStageDetector(nn.Module):
    def __init__(self, score_thr=0.7):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.rpn_head = nn.Conv2d(8, 1, 1)
        self.roi_head = RoIHead()
        self.score_thr = score_thr

    def forward_train(self, img, rpn_targets, roi_labels):
        feats = self.backbone(img)
        rpn_logits = self.rpn_head(feats)
        losses = {"loss_rpn": F.binary_cross_entropy_with_logits(rpn_logits, rpn_targets)}
        scores = rpn_logits.sigmoid().flatten(1)
        keep = scores > self.score_thr
        if keep.sum() == 0:
            return losses  # <-- CUT
        roi_feats = feats.flatten(2).transpose(1, 2)[keep]
        losses["loss_cls"] = F.cross_entropy(self.roi_head(roi_feats), roi_labels[:roi_feats.shape[0]])
        return losses


def run():
    torch.manual_seed(0)
    model = TwoStageDetector()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    with torch.no_grad():
        model.rpn_head.bias.fill_(-4.6)  # focal-style prior: initial scores ~0.01
    img = torch.randn(2, 3, 6, 6)
    rpn_targets = (torch.rand(2, 1, 6, 6) > 0.9).float()
    roi_labels = torch.randint(0, 3, (72,))
    losses = model.forward_train(img, rpn_targets, roi_labels)
    loss = sum(losses.values())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "losses": losses, "loss": loss}
