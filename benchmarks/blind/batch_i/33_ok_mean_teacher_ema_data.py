"""Control: mean-teacher semi-supervised step. The teacher is an EMA of the
student updated through .data under no_grad, its pseudo-targets come from
torch.no_grad() and argmax, and the losses are logged with .item(). All of that is
intended; the student is trained by the loss: student.fc1.weight.grad is nonzero.
Thread: SO, EMA of model weights via .data (pattern; thread not located).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student.fc1.weight"
EXPECT = "grad_ok"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class MeanTeacher:
    def __init__(self, student, ema_decay=0.99):
        self.student = student
        self.teacher = Net()
        self.teacher.load_state_dict(student.state_dict())
        for p in self.teacher.parameters():
            p.requires_grad_(False)
        self.decay = ema_decay
        self.opt = torch.optim.SGD(student.parameters(), lr=0.05)
        self.log = []

    @torch.no_grad()
    def update_teacher(self):
        for t, s in zip(self.teacher.parameters(), self.student.parameters()):
            t.data.mul_(self.decay).add_(s.data, alpha=1 - self.decay)

    def step(self, x_lab, y, x_unl):
        with torch.no_grad():
            pseudo = self.teacher(x_unl).argmax(-1)
        sup = F.cross_entropy(self.student(x_lab), y)
        cons = F.cross_entropy(self.student(x_unl + 0.05 * torch.randn_like(x_unl)), pseudo)
        loss = sup + 0.5 * cons  # <-- CUT
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.update_teacher()
        self.log.append((sup.item(), cons.item()))
        return loss


def run():
    torch.manual_seed(0)
    student = Net()
    mt = MeanTeacher(student)
    loss = mt.step(torch.randn(8, 10), torch.randint(0, 4, (8,)), torch.randn(16, 10))
    return {"student": student, "teacher": mt.teacher, "mt": mt, "loss": loss}
