"""Self-training: a generator pseudo-labels each batch with the teacher inside
`with torch.no_grad():` and yields from inside the block. Grad mode stays off
while the consumer's loop body runs, so the student's logits have no grad_fn
and loss.backward() raises on the first batch.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student[0].weight"
EXPECT = "backward_error"


def pseudo_labeled(teacher, batches):
    with torch.no_grad():
        for x in batches:
            yield x, teacher(x).argmax(-1)


def run():
    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 5)).eval()
    student = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 5))
    opt = torch.optim.SGD(student.parameters(), lr=0.1)
    batches = [torch.randn(8, 12) for _ in range(3)]
    for x, y in pseudo_labeled(teacher, batches):
        logits = student(x)  # <-- CUT
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"teacher": teacher, "student": student, "opt": opt, "loss": loss}
