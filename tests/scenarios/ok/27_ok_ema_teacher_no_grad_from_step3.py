"""Control: 3-step self-distillation loop. From step index 2 on, a consistency
term against an EMA teacher is added; the teacher output is computed under
torch.no_grad() and the EMA update also runs under no_grad. The student's
gradient in the last step is intact: student[0].weight.grad is nonzero.
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
    student = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
    teacher = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
    teacher.load_state_dict(student.state_dict())
    for p in teacher.parameters():
        p.requires_grad_(False)
    opt = torch.optim.SGD(student.parameters(), lr=0.05)
    xs = torch.randn(3, 8, 6)
    ys = torch.randint(0, 3, (3, 8))
    for step in range(3):
        opt.zero_grad()
        logits = student(xs[step])
        loss = F.cross_entropy(logits, ys[step])
        if step >= 2:
            with torch.no_grad():
                t_prob = F.softmax(teacher(xs[step]), dim=-1)
            loss = loss + F.kl_div(F.log_softmax(logits, -1), t_prob, reduction="batchmean")  # <-- CUT
        loss.backward()
        opt.step()
        with torch.no_grad():
            for tp, sp in zip(teacher.parameters(), student.parameters()):
                tp.mul_(0.9).add_(sp.detach(), alpha=0.1)
    return {"student": student, "teacher": teacher, "opt": opt, "loss": loss}
