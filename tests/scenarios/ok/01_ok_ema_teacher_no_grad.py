"""Control: mean-teacher training. The teacher is an EMA copy updated in place
under torch.no_grad(), its predictions are computed under no_grad and used as
soft targets; the student trains normally and gets a non-zero gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student[0].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    student = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    teacher = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    teacher.load_state_dict(student.state_dict())
    for p in teacher.parameters():
        p.requires_grad_(False)
    opt = torch.optim.SGD(student.parameters(), lr=0.1)
    x = torch.randn(10, 8)
    with torch.no_grad():
        soft = F.softmax(teacher(x + 0.1 * torch.randn_like(x)), dim=1)
    loss = F.kl_div(F.log_softmax(student(x), dim=1), soft, reduction="batchmean")  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for pt, ps in zip(teacher.parameters(), student.parameters()):
            pt.mul_(0.99).add_(ps.detach(), alpha=0.01)
    return {"student": student, "teacher": teacher, "loss": loss}
