"""Knowledge distillation with a logit term and a feature term. The teacher forward is
under torch.no_grad() (correct), but the student's backbone features were put in the
same block so the feature-matching loss would not "double count". The student's head
still trains from the logits computed on those features; the backbone gets None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student.backbone[0].weight"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self, d_in=24, d_h=32, n_cls=6):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d_in, d_h), nn.ReLU(), nn.Linear(d_h, d_h), nn.ReLU())
        self.head = nn.Linear(d_h, n_cls)

    def forward(self, x):
        f = self.backbone(x)
        return f, self.head(f)


class Distiller:
    def __init__(self, teacher, student, T=4.0, alpha=0.7, beta=0.1):
        self.teacher, self.student = teacher.eval(), student
        self.proj = nn.Linear(32, 32)
        self.opt = torch.optim.SGD(list(student.parameters()) + list(self.proj.parameters()), lr=0.05)
        self.T, self.alpha, self.beta = T, alpha, beta

    def step(self, x, y):
        with torch.no_grad():
            t_feat, t_logits = self.teacher(x)
            s_feat = self.student.backbone(x)  # <-- CUT
        s_logits = self.student.head(s_feat)
        kd = F.kl_div(F.log_softmax(s_logits / self.T, -1), F.softmax(t_logits / self.T, -1),
                      reduction="batchmean") * self.T ** 2
        ce = F.cross_entropy(s_logits, y)
        feat = F.mse_loss(self.proj(s_feat), t_feat)
        loss = self.alpha * kd + (1 - self.alpha) * ce + self.beta * feat
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    teacher, student = Net(), Net()
    dist = Distiller(teacher, student)
    x, y = torch.randn(32, 24), torch.randint(0, 6, (32,))
    loss = dist.step(x, y)
    return {"teacher": teacher, "student": student, "dist": dist, "loss": loss}
