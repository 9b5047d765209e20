"""Self-supervised hashing: a custom straight-through sign Function returns None from backward
(the author thought 'sign has no gradient'), so the encoder gets no grad. The no_grad teacher is fine.
Thread: custom autograd Function STE encoder grad None (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "custom_function"
QUERY = 'student[0].weight'
EXPECT = "grad_none"

class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.sign(x)
    @staticmethod
    def backward(ctx, g):
        return None  # <-- CUT

def run():
    torch.manual_seed(0)
    student = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 8))
    teacher = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 8))
    teacher.load_state_dict(student.state_dict())
    decoder = nn.Linear(8, 8)
    x = torch.randn(8, 10)
    with torch.no_grad():
        t = torch.sign(teacher(x + 0.05 * torch.randn_like(x)))
    b = SignSTE.apply(student(x))
    loss = F.mse_loss(decoder(b), t)
    loss.backward()
    return {"student": student, "decoder": decoder}
