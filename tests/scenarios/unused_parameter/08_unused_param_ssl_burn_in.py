"""Semi-supervised oriented detection, teacher-student (HamPerdredes/SOOD#33:
"Expected to have finished reduction ... parameters that were not used").
During the burn-in stage forward() returns the supervised losses before the
unsupervised branch runs, so its projection head has no grad in those steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.student.unsup_proj.weight"
EXPECT = "grad_none"


class Detector(nn.Module):
    def __init__(self, n_cls=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.cls_head = nn.Linear(32, n_cls)
        self.unsup_proj = nn.Linear(32, 16)

    def forward(self, x):
        return self.backbone(x)


class SemiDetector(nn.Module):
    def __init__(self, burn_in_steps=2000):
        super().__init__()
        self.student = Detector()
        self.teacher = Detector()
        self.teacher.load_state_dict(self.student.state_dict())
        self.teacher.requires_grad_(False)
        self.burn_in_steps = burn_in_steps

    def forward_train(self, sup_img, sup_labels, unsup_img, step):
        feats = self.student(sup_img)
        losses = {"loss_cls": F.cross_entropy(self.student.cls_head(feats), sup_labels)}
        if step < self.burn_in_steps:
            return losses  # <-- CUT
        with torch.no_grad():
            t = F.normalize(self.teacher.unsup_proj(self.teacher(unsup_img)), dim=-1)
        s = F.normalize(self.student.unsup_proj(self.student(unsup_img)), dim=-1)
        losses["loss_unsup"] = (2 - 2 * (s * t).sum(-1)).mean()
        return losses


def run():
    torch.manual_seed(0)
    model = SemiDetector()
    optimizer = torch.optim.SGD(model.student.parameters(), lr=0.01)
    sup_img, sup_labels = torch.randn(2, 3, 8, 8), torch.randint(0, 3, (2,))
    unsup_img = torch.randn(2, 3, 8, 8)
    losses = model.forward_train(sup_img, sup_labels, unsup_img, step=10)
    loss = sum(losses.values())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "losses": losses}
