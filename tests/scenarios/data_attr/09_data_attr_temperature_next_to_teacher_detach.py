"""Distillation step with two cuts: the teacher's logits are detached (intended, the
teacher is frozen) and the learnable temperature is read through `.data` "to keep it
positive". The student trains, but the temperature never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "log_t"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    teacher = nn.Linear(6, 4)
    student = nn.Linear(6, 4)
    log_t = nn.Parameter(torch.zeros(()))
    opt = torch.optim.SGD(list(student.parameters()) + [log_t], lr=0.1)
    x = torch.randn(8, 6)
    t_logits = teacher(x).detach()
    temp = log_t.data.exp().clamp(min=0.5)  # <-- CUT
    s_logp = F.log_softmax(student(x) / temp, dim=-1)
    t_p = F.softmax(t_logits / temp, dim=-1)
    loss = F.kl_div(s_logp, t_p, reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"student": student, "log_t": log_t, "loss": loss}
