"""Knowledge distillation: the teacher is put in eval mode and run under
torch.no_grad(), as it should be. The student's forward was written on the next
line inside the same with-block, so the KD + CE loss has no grad_fn and
backward raises "element 0 of tensors does not require grad".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def make_net(width):
    return nn.Sequential(nn.Flatten(), nn.Linear(64, width), nn.ReLU(), nn.Linear(width, 10))


class Distiller:
    def __init__(self, teacher, student, T=4.0, alpha=0.7):
        self.teacher, self.student = teacher.eval(), student
        self.opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
        self.T, self.alpha = T, alpha

    def kd_loss(self, s_logits, t_logits, y):
        soft = F.kl_div(F.log_softmax(s_logits / self.T, -1), F.softmax(t_logits / self.T, -1),
                        reduction="batchmean") * self.T ** 2
        return self.alpha * soft + (1 - self.alpha) * F.cross_entropy(s_logits, y)

    def train_step(self, x, y):
        self.student.train()
        with torch.no_grad():
            t_logits = self.teacher(x)
            s_logits = self.student(x)  # <-- CUT
        loss = self.kd_loss(s_logits, t_logits, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    d = Distiller(make_net(128), make_net(16))
    x, y = torch.randn(8, 1, 8, 8), torch.randint(0, 10, (8,))
    loss = d.train_step(x, y)
    return {"distiller": d, "loss": loss}
