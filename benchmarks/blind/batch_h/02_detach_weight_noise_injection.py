"""Weight-noise regularisation: the layer takes w = self.weight.detach() and adds noise
to it (the user had learned that editing a detached copy raises no error). The noisy copy is used in F.linear, so the noisy layer's weight gets no gradient;
the EMA teacher (updated under no_grad) is a legitimate cut next to it.
Thread: discuss.pytorch.org/t/inplace-operation-changes-is-leaf-attribute/120297
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student.noisy.weight"
EXPECT = "grad_none"


class NoisyLinear(nn.Linear):
    def __init__(self, fin, fout, sigma=0.05):
        super().__init__(fin, fout)
        self.sigma = sigma

    def forward(self, x):
        if not self.training:
            return super().forward(x)
        w = self.weight.detach()  # <-- CUT
        w = w + self.sigma * torch.randn_like(w)
        return F.linear(x, w, self.bias)


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.noisy = NoisyLinear(32, 32)
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(F.relu(self.noisy(self.stem(x))))


@torch.no_grad()
def ema_update(teacher, student, m=0.99):
    for pt, ps in zip(teacher.parameters(), student.parameters()):
        pt.mul_(m).add_(ps.detach(), alpha=1 - m)


def run():
    torch.manual_seed(0)
    student = Student()
    teacher = Student().eval()
    teacher.load_state_dict(student.state_dict())
    for p in teacher.parameters():
        p.requires_grad_(False)
    opt = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(16, 10)
    with torch.no_grad():
        soft = F.softmax(teacher(x), dim=-1)
    logits = student(x)
    loss = F.kl_div(F.log_softmax(logits, -1), soft, reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema_update(teacher, student)
    return {"student": student, "teacher": teacher, "loss": loss}
