"""DINO training step: the teacher forward runs under torch.no_grad(), but the
student's projection head call was indented into the same block when the multi-crop
loop was refactored. Student logits carry no graph for the head, so the head never
trains (the student backbone's features still get the centering-term grad).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student.head.weight"
EXPECT = "grad_none"


class MultiCropWrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 24), nn.GELU())
        self.head = nn.Linear(24, 12)


def train_one_step(student, teacher, crops, center, opt, student_temp=0.1, teacher_temp=0.04):
    feats = [student.backbone(c) for c in crops]
    with torch.no_grad():
        t_out = [F.softmax((teacher.head(teacher.backbone(c)) - center) / teacher_temp, -1) for c in crops[:2]]
        s_out = [student.head(f) / student_temp for f in feats]  # <-- CUT
    reg = sum(f.pow(2).mean() for f in feats) * 1e-3
    loss = 0.0
    for iq, q in enumerate(t_out):
        for v, s in enumerate(s_out):
            if v != iq:
                loss = loss + torch.sum(-q * F.log_softmax(s, -1), -1).mean()
    loss = loss + reg
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def run():
    torch.manual_seed(0)
    student, teacher = MultiCropWrapper(), MultiCropWrapper()
    teacher.load_state_dict(student.state_dict())
    teacher.requires_grad_(False)
    opt = torch.optim.AdamW(student.parameters(), lr=5e-4)
    x = torch.randn(4, 10)
    crops = [x + 0.1 * torch.randn_like(x) for _ in range(4)]
    loss = train_one_step(student, teacher, crops, torch.zeros(1, 12), opt)
    return {"student": student, "teacher": teacher, "loss": loss}
