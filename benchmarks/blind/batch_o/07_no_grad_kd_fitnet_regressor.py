"""FitNets-style distillation: the teacher forward is (correctly) under
torch.no_grad(), but the student's hint regressor was placed in the same block.
The student still trains via the logit KD loss; the regressor never does.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "distiller.regressor.weight"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(20, width), nn.ReLU())
        self.fc = nn.Linear(width, 5)

    def forward(self, x):
        f = self.features(x)
        return f, self.fc(f)


class Distiller(nn.Module):
    def __init__(self, teacher, student, T=4.0, hint_w=0.5):
        super().__init__()
        self.teacher, self.student = teacher, student
        self.regressor = nn.Linear(16, 64)
        self.T, self.hint_w = T, hint_w

    def forward(self, x, y):
        s_feat, s_logits = self.student(x)
        with torch.no_grad():
            t_feat, t_logits = self.teacher(x)
            s_hint = self.regressor(s_feat)  # <-- CUT
        kd = F.kl_div(F.log_softmax(s_logits / self.T, -1), F.softmax(t_logits / self.T, -1),
                      reduction="batchmean") * self.T ** 2
        hint = F.mse_loss(s_hint, t_feat)
        return F.cross_entropy(s_logits, y) + kd + self.hint_w * hint


def run():
    torch.manual_seed(0)
    teacher, student = Net(64).eval(), Net(16)
    distiller = Distiller(teacher, student)
    params = list(student.parameters()) + list(distiller.regressor.parameters())
    opt = torch.optim.SGD(params, lr=0.1)
    x, y = torch.randn(8, 20), torch.randint(0, 5, (8,))
    loss = distiller(x, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"distiller": distiller, "student": student, "loss": loss}
