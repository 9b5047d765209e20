"""DINOLoss called with one teacher view and one student view, as the docstring shows.
The cross-view loss matrix is 1x1, its diagonal is zeroed, so n_terms = 0 and
loss.sum() / (n_terms * batch) is 0/0: the loss is nan and every student grad is nan.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student.head.weight"
EXPECT = "grad_nonfinite"


class DINOLoss(nn.Module):
    def __init__(self, output_dim=8, teacher_temp=0.04, student_temp=0.1, center_momentum=0.9):
        super().__init__()
        self.teacher_temp, self.student_temp = teacher_temp, student_temp
        self.center_momentum = center_momentum
        self.register_buffer("center", torch.zeros(1, output_dim))

    def forward(self, teacher_out, student_out):
        t_out = torch.stack([F.softmax((t - self.center) / self.teacher_temp, dim=-1) for t in teacher_out])
        s_out = torch.stack([F.log_softmax(s / self.student_temp, dim=-1) for s in student_out])
        loss = -torch.einsum("tbk,sbk->ts", t_out, s_out)
        loss = loss * (1 - torch.eye(len(teacher_out), len(student_out)))
        n_terms = loss.numel() - loss.diagonal().numel()
        batch_size = teacher_out[0].shape[0]
        loss = loss.sum() / (n_terms * batch_size)  # <-- CUT
        self.update_center(torch.cat(teacher_out))
        return loss

    @torch.no_grad()
    def update_center(self, teacher_out):
        batch_center = teacher_out.mean(0, keepdim=True)
        self.center = self.center * self.center_momentum + batch_center * (1 - self.center_momentum)


class Branch(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(6, 16), nn.GELU())
        self.head = nn.Linear(16, 8)

    def forward(self, x):
        return self.head(self.backbone(x))


def run():
    torch.manual_seed(0)
    student, teacher = Branch(), Branch()
    teacher.load_state_dict(student.state_dict())
    for p in teacher.parameters():
        p.requires_grad = False
    criterion = DINOLoss(output_dim=8)
    opt = torch.optim.SGD(student.parameters(), lr=0.01)
    x = torch.randn(4, 6)
    view = x + 0.1 * torch.randn_like(x)
    loss = criterion([teacher(x)], [student(view)])
    opt.zero_grad()
    loss.backward()
    return {"student": student, "teacher": teacher, "loss": loss}
