"""Control: mean-teacher semi-supervised step. Pseudo-labels come from an EMA
teacher under torch.no_grad() with a confidence threshold, the teacher is updated
through .data (polyak), and the mask ratio is logged with .item(). The student
trains normally."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student[0].weight"
EXPECT = "grad_ok"


def make():
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))


def ema_update(teacher, student, m=0.99):
    for pt, ps in zip(teacher.parameters(), student.parameters()):
        pt.data.mul_(m).add_(ps.data, alpha=1 - m)


def run():
    torch.manual_seed(0)
    student, teacher = make(), make()
    teacher.load_state_dict(student.state_dict())
    teacher.requires_grad_(False)
    opt = torch.optim.SGD(student.parameters(), lr=0.03)
    xl, yl, xu = torch.randn(6, 8), torch.randint(0, 3, (6,)), torch.randn(12, 8)
    with torch.no_grad():
        conf, pseudo = teacher(xu).softmax(1).max(1)
        mask = (conf > 0.2).float()
    sup = F.cross_entropy(student(xl), yl)
    unsup = (F.cross_entropy(student(xu + 0.3 * torch.randn_like(xu)), pseudo, reduction="none") * mask).mean()
    loss = sup + unsup  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema_update(teacher, student)
    log = {"loss": loss.item(), "mask_ratio": mask.mean().item()}
    return {"student": student, "teacher": teacher, "loss": loss, "log": log}
