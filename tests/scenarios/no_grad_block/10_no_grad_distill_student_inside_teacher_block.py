"""Knowledge distillation: the student forward was pasted inside the
`with torch.no_grad():` meant only for the (frozen) teacher. Neither logit
tensor requires grad, so the KL loss has no grad_fn and backward raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student[0].weight"
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5))
    student = nn.Sequential(nn.Linear(10, 8), nn.ReLU(), nn.Linear(8, 5))
    teacher.requires_grad_(False)
    teacher.eval()
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    x = torch.randn(16, 10)
    T = 2.0
    opt.zero_grad()
    with torch.no_grad():
        t_logits = teacher(x)
        s_logits = student(x)  # <-- CUT
    loss = F.kl_div(F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1),
                    reduction="batchmean") * T * T
    loss.backward()
    opt.step()
    return {"student": student, "teacher": teacher, "loss": loss}
