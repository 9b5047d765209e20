"""YOLOv8-style detection loss on a mosaic batch that has no labelled objects. The task-aligned
assigner (top-k under no_grad, as intended) finds no foreground anchors, and the loss only calls the
box loss under `if fg_mask.sum():`, so pred_distri is never used. The classification branch cv3 gets
a gradient from the all-negative BCE; the box half of the concatenated output is split off and never
used, so head.cv2[0].weight.grad exists but is all zeros.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "head.cv2[0].weight"
EXPECT = "grad_zero"

HYP = {"box": 7.5, "cls": 0.5, "dfl": 1.5, "topk": 4, "reg_max": 4}


class DetectHead(nn.Module):
    def __init__(self, c=8, nc=3, reg_max=4):
        super().__init__()
        self.nc, self.reg_max = nc, reg_max
        self.cv2 = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.SiLU(), nn.Conv2d(c, 4 * reg_max, 1))
        self.cv3 = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.SiLU(), nn.Conv2d(c, nc, 1))

    def forward(self, x):
        return torch.cat([self.cv2(x), self.cv3(x)], 1)


def make_anchors(h, w, stride):
    ys, xs = torch.meshgrid(torch.arange(h) + 0.5, torch.arange(w) + 0.5, indexing="ij")
    return torch.stack([xs, ys], -1).view(-1, 2), torch.full((h * w, 1), float(stride))


def dist2bbox(distance, anchor_points):
    lt, rb = distance.chunk(2, -1)
    return torch.cat([anchor_points - lt, anchor_points + rb], -1)


class TaskAlignedAssigner:
    def __init__(self, topk):
        self.topk = topk

    @torch.no_grad()
    def __call__(self, pd_scores, pd_bboxes, anc_points, gt_labels, gt_bboxes, mask_gt):
        b, a, _ = pd_scores.shape
        if gt_bboxes.shape[1] == 0:
            return torch.zeros(b, a, dtype=torch.bool), torch.zeros_like(pd_scores)
        inside = ((anc_points[None, None] > gt_bboxes[..., None, :2]) &
                  (anc_points[None, None] < gt_bboxes[..., None, 2:])).all(-1)
        cls = pd_scores.gather(2, gt_labels.long().expand(-1, -1, a).transpose(1, 2)).transpose(1, 2)
        metric = cls * inside * mask_gt
        topk_idx = metric.topk(self.topk, dim=-1).indices
        pos = torch.zeros_like(metric).scatter_(-1, topk_idx, 1.0) * inside * mask_gt
        fg_mask = pos.sum(1) > 0
        target_scores = torch.zeros_like(pd_scores)
        return fg_mask, target_scores


class v8DetectionLoss:
    def __init__(self, head, hyp):
        self.head, self.hyp = head, hyp
        self.assigner = TaskAlignedAssigner(hyp["topk"])
        self.proj = torch.arange(hyp["reg_max"], dtype=torch.float)

    def bbox_loss(self, pred_bboxes, target_bboxes, fg_mask):
        return F.l1_loss(pred_bboxes[fg_mask], target_bboxes[fg_mask]), torch.zeros(())

    def __call__(self, feats, batch):
        loss = torch.zeros(3)
        b, _, h, w = feats.shape
        pred = feats.view(b, -1, h * w).permute(0, 2, 1)
        pred_distri, pred_scores = pred.split((4 * self.hyp["reg_max"], self.head.nc), -1)
        anchor_points, stride = make_anchors(h, w, 8)
        d = pred_distri.view(b, h * w, 4, -1).softmax(3) @ self.proj
        pred_bboxes = dist2bbox(d, anchor_points)
        fg_mask, target_scores = self.assigner(pred_scores.detach().sigmoid(), pred_bboxes.detach(),
                                               anchor_points, batch["cls"], batch["bboxes"], batch["mask_gt"])
        target_scores_sum = max(target_scores.sum(), 1)
        loss[1] = F.binary_cross_entropy_with_logits(pred_scores, target_scores, reduction="sum") / target_scores_sum
        if fg_mask.sum():  # <-- CUT
            loss[0], loss[2] = self.bbox_loss(pred_bboxes, batch["target_bboxes"], fg_mask)
        loss[0] *= self.hyp["box"]
        loss[1] *= self.hyp["cls"]
        loss[2] *= self.hyp["dfl"]
        return loss.sum() * b, loss.detach()


def run():
    torch.manual_seed(0)
    head = DetectHead()
    criterion = v8DetectionLoss(head, HYP)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.01, momentum=0.937)
    feats_in = torch.randn(2, 8, 4, 4)
    batch = {"cls": torch.zeros(2, 0, 1), "bboxes": torch.zeros(2, 0, 4), "mask_gt": torch.zeros(2, 0, 1),
             "target_bboxes": torch.zeros(2, 16, 4)}
    loss, loss_items = criterion(head(feats_in), batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"head": head, "criterion": criterion, "loss": loss, "loss_items": loss_items}
