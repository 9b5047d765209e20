"""DINO-style student: the encoder is wrapped in checkpoint(..., use_reentrant=True) to save memory,
the input images do not require grad, so the student encoder gets no grad. The no_grad teacher is fine.
Thread: gradient checkpointing student weights no gradient (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "reentrant_checkpoint"
QUERY = 'student.enc[0].weight'
EXPECT = "grad_none"

from torch.utils.checkpoint import checkpoint

class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.Linear(32, 32))
        self.head = nn.Linear(32, 16)
    def forward(self, x):
        h = checkpoint(self.enc, x, use_reentrant=True)  # <-- CUT
        return self.head(h)

def run():
    torch.manual_seed(0)
    student, teacher = Student(), Student()
    teacher.load_state_dict(student.state_dict())
    teacher.requires_grad_(False)
    x = torch.randn(8, 12)
    with torch.no_grad():
        t = F.softmax(teacher(x) / 0.04, -1)
    s = F.log_softmax(student(x + 0.1 * torch.randn_like(x)) / 0.1, -1)
    loss = -(t * s).sum(-1).mean()
    loss.backward()
    return {"student": student}
