"""Knowledge-distillation trainer: the teacher runs under torch.no_grad() (on
purpose), but the student's backbone features were also .detach()-ed, a leftover
from a feature-caching experiment. The student head trains, the student backbone
never does: student.backbone[0].weight.grad is None.
Thread: SO 56816241 "Difference between detach() and with torch.nograd() in PyTorch?".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student.backbone[0].weight"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self, d_in, width, n_cls):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.head = nn.Linear(width, n_cls)

    def forward(self, x):
        return self.head(self.backbone(x))


class Distiller:
    def __init__(self, teacher, student, temperature=4.0, alpha=0.7):
        self.teacher = teacher.eval()
        self.student = student
        self.T = temperature
        self.alpha = alpha
        self.opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)

    def student_logits(self, x):
        feats = self.student.backbone(x).detach()  # <-- CUT
        return self.student.head(feats)

    def train_step(self, x, y):
        with torch.no_grad():
            t_logits = self.teacher(x)
        s_logits = self.student_logits(x)
        kd = F.kl_div(F.log_softmax(s_logits / self.T, -1), F.softmax(t_logits / self.T, -1),
                      reduction="batchmean") * self.T ** 2
        ce = F.cross_entropy(s_logits, y)
        loss = self.alpha * kd + (1 - self.alpha) * ce
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    teacher = Net(20, 64, 5)
    student = Net(20, 16, 5)
    distiller = Distiller(teacher, student)
    x = torch.randn(32, 20)
    y = torch.randint(0, 5, (32,))
    loss = distiller.train_step(x, y)
    return {"teacher": teacher, "student": student, "distiller": distiller, "loss": loss}
