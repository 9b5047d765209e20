"""NanoDet-style GFL head during a short warm-up: when a batch has no positive
anchors, the bbox and DFL losses fall back to `torch.tensor(0).to(device)` and
the classification loss is computed on an empty selection replaced the same way.
None of the loss terms requires grad, so loss.backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "None"
EXPECT = "backward_error"


class GFLHead(nn.Module):
    def __init__(self, num_classes=3, ch=16, reg_max=4):
        super().__init__()
        self.reg_max = reg_max
        self.cls = nn.Conv2d(ch, num_classes, 3, padding=1)
        self.reg = nn.Conv2d(ch, 4 * (reg_max + 1), 3, padding=1)

    def forward(self, feat):
        return self.cls(feat), self.reg(feat)

    def loss_single(self, cls_score, bbox_pred, labels, label_scores, bbox_targets, num_total_samples, device):
        num_classes = cls_score.shape[1]
        cls_score = cls_score.permute(0, 2, 3, 1).reshape(-1, num_classes)
        bbox_pred = bbox_pred.permute(0, 2, 3, 1).reshape(-1, 4 * (self.reg_max + 1))
        labels = labels.reshape(-1)
        bg_class_ind = num_classes
        pos_inds = torch.nonzero((labels >= 0) & (labels < bg_class_ind), as_tuple=False).squeeze(1)
        if len(pos_inds) > 0:
            pos_pred = bbox_pred[pos_inds].view(-1, self.reg_max + 1)
            loss_dfl = F.cross_entropy(pos_pred, bbox_targets[pos_inds].view(-1).long())
            loss_bbox = (bbox_pred[pos_inds].sigmoid() - 0.5).abs().mean()
            weight_targets = cls_score[pos_inds].detach().sigmoid().max(dim=1)[0].sum()
            score = label_scores[pos_inds]
            loss_qfl = F.binary_cross_entropy_with_logits(
                cls_score[pos_inds], F.one_hot(labels[pos_inds], num_classes).float() * score[:, None])
        else:
            loss_bbox = torch.tensor(0).to(device)  # <-- CUT
            loss_dfl = torch.tensor(0).to(device)
            loss_qfl = torch.tensor(0).to(device)
            weight_targets = torch.tensor(0).to(device)
        return loss_qfl, loss_bbox, loss_dfl, weight_targets


def run():
    torch.manual_seed(0)
    device = torch.device("cpu")
    backbone = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU())
    head = GFLHead()
    params = list(backbone.parameters()) + list(head.parameters())
    optimizer = torch.optim.SGD(params, lr=0.14, momentum=0.9, weight_decay=1e-4)

    img = torch.rand(2, 3, 16, 16)
    cls_score, bbox_pred = head(backbone(img))
    n = cls_score.shape[0] * cls_score.shape[2] * cls_score.shape[3]
    labels = torch.full((n,), 3, dtype=torch.long)           # every anchor is background
    label_scores = torch.zeros(n)
    bbox_targets = torch.zeros(n, 4)
    loss_qfl, loss_bbox, loss_dfl, _ = head.loss_single(
        cls_score, bbox_pred, labels, label_scores, bbox_targets, num_total_samples=1, device=device)
    loss = loss_qfl + loss_bbox + loss_dfl
    loss_states = {"loss_qfl": loss_qfl, "loss_bbox": loss_bbox, "loss_dfl": loss_dfl}

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"head": head, "loss": loss, "loss_states": loss_states}
