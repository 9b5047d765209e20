"""Control (lhoyer/DAFormer#59, CuriousAI/mean-teacher#29): UDA self-training
with an EMA teacher. Pseudo-labels come from the teacher and are detached, the
teacher is updated with .data mul_/add_ under no_grad after the student step.
Only the student trains; student.conv1.weight.grad is normal.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student.conv1.weight"
EXPECT = "grad_ok"


class SegNet(nn.Module):
    def __init__(self, n_cls=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.cls = nn.Conv2d(8, n_cls, 1)

    def forward(self, x):
        return self.cls(F.relu(self.conv1(x)))


@torch.no_grad()
def update_ema(teacher, student, alpha=0.99, it=1):
    alpha = min(1 - 1 / (it + 1), alpha)
    for ema_param, param in zip(teacher.parameters(), student.parameters()):
        ema_param.data.mul_(alpha).add_(param.data, alpha=1 - alpha)


def run():
    torch.manual_seed(0)
    student = SegNet()
    teacher = SegNet()
    teacher.load_state_dict(student.state_dict())
    for p in teacher.parameters():
        p.requires_grad_(False)
    opt = torch.optim.AdamW(student.parameters(), lr=6e-5)
    src_img, src_lbl = torch.randn(2, 3, 8, 8), torch.randint(0, 4, (2, 8, 8))
    tgt_img = torch.randn(2, 3, 8, 8)
    for it in range(2):
        opt.zero_grad()
        src_loss = F.cross_entropy(student(src_img), src_lbl)
        ema_softmax = torch.softmax(teacher(tgt_img).detach(), dim=1)
        pseudo_prob, pseudo_label = torch.max(ema_softmax, dim=1)
        weight = (pseudo_prob > 0.3).float().mean()
        mix_loss = weight * F.cross_entropy(student(tgt_img), pseudo_label)
        loss = src_loss + mix_loss  # <-- CUT
        loss.backward()
        opt.step()
        update_ema(teacher, student, it=it + 1)
    return {"student": student, "teacher": teacher, "opt": opt, "loss": loss}
