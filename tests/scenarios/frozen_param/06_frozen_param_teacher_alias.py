"""Self-distillation: `teacher = student` was meant to be a copy, and the teacher
is frozen with teacher.requires_grad_(False). Both names refer to the same
module, so the student is frozen and its weights get no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student[0].weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    student = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
    proj = nn.Linear(3, 3)
    teacher = student
    teacher.requires_grad_(False)  # <-- CUT
    opt = torch.optim.SGD(list(student.parameters()) + list(proj.parameters()), lr=0.1)
    x = torch.randn(8, 6)
    with torch.no_grad():
        t_out = F.softmax(teacher(x), dim=1)
    loss = F.kl_div(F.log_softmax(proj(student(x)), dim=1), t_out, reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"student": student, "proj": proj, "loss": loss}
