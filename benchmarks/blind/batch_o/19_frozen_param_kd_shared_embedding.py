"""Distillation where the student reuses the teacher's embedding module to save
memory (student.embed = teacher.embed). Freezing the teacher afterwards also
freezes that shared embedding; the student's body trains but
student.embed.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student.embed.weight"
EXPECT = "grad_none"


class TextNet(nn.Module):
    def __init__(self, hidden, vocab=40, dim=12, n_cls=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.body = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, n_cls))

    def forward(self, ids):
        return self.body(self.embed(ids).mean(1))


def make_pair():
    teacher = TextNet(hidden=64)
    student = TextNet(hidden=16)
    student.embed = teacher.embed
    teacher.eval()
    for p in teacher.parameters():
        p.requires_grad = False  # <-- CUT
    return teacher, student


def run():
    torch.manual_seed(0)
    teacher, student = make_pair()
    opt = torch.optim.Adam([p for p in student.parameters() if p.requires_grad], lr=1e-3)
    ids, y = torch.randint(0, 40, (8, 5)), torch.randint(0, 4, (8,))
    T = 2.0
    with torch.no_grad():
        t_logits = teacher(ids)
    s_logits = student(ids)
    loss = 0.5 * F.cross_entropy(s_logits, y) + 0.5 * T * T * F.kl_div(
        F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1), reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"student": student, "teacher": teacher, "loss": loss}
