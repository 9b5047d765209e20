"""Distillation trainer with a hook-style method after_backward() that clears
the teacher's gradients "to save memory" by calling self.distiller.zero_grad().
The Distiller module wraps both teacher and student, so the student's fresh
gradients are set to None before the grad-norm clip and optimizer step.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.distiller.student.fc.weight"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(12, h), nn.ReLU())
        self.fc = nn.Linear(h, 4)

    def forward(self, x):
        return self.fc(self.body(x))


class Distiller(nn.Module):
    def __init__(self, teacher, student):
        super().__init__()
        self.teacher, self.student = teacher, student


class Trainer:
    def __init__(self, T=3.0):
        self.distiller = Distiller(Net(48).eval(), Net(12))
        self.opt = torch.optim.SGD(self.distiller.student.parameters(), lr=0.1)
        self.T = T

    def after_backward(self):
        self.distiller.zero_grad()  # <-- CUT

    def train_step(self, x, y):
        with torch.no_grad():
            t = self.distiller.teacher(x)
        s = self.distiller.student(x)
        loss = F.cross_entropy(s, y) + self.T ** 2 * F.kl_div(
            F.log_softmax(s / self.T, -1), F.log_softmax(t / self.T, -1),
            log_target=True, reduction="batchmean")
        self.opt.zero_grad()
        loss.backward()
        self.after_backward()
        torch.nn.utils.clip_grad_norm_(self.distiller.student.parameters(), 1.0)
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    trainer = Trainer()
    x, y = torch.randn(8, 12), torch.randint(0, 4, (8,))
    loss = trainer.train_step(x, y)
    return {"trainer": trainer, "loss": loss}
