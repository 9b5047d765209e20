"""Control (pytorch/pytorch#40294, `inputs=` argument to backward: populate .grad only for
one model): lossA.backward(inputs=list(modelA.parameters())) updates only modelA, and
an EMA teacher is refreshed through .data under no_grad. Both cuts are intended;
modelA's gradient is normal."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "modelA.fc.weight"
EXPECT = "grad_ok"


class Model(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return torch.tanh(self.fc(x))


@torch.no_grad()
def ema_update(teacher, student, decay=0.99):
    for pt, ps in zip(teacher.parameters(), student.parameters()):
        pt.data.mul_(decay).add_(ps.data, alpha=1 - decay)


def run():
    torch.manual_seed(0)
    modelA, modelB, teacher = Model(), Model(), Model()
    teacher.load_state_dict(modelA.state_dict())
    for p in teacher.parameters():
        p.requires_grad_(False)
    optA = torch.optim.SGD(modelA.parameters(), lr=0.1)
    inp, label = torch.randn(4, 8), torch.randn(4, 8)
    outA = modelA(inp)
    outB = modelB(outA)
    lossA = F.mse_loss(outA, teacher(inp)) + F.mse_loss(outB, label)  # <-- CUT
    lossA.backward(inputs=list(modelA.parameters()))
    optA.step()
    ema_update(teacher, modelA)
    return {"modelA": modelA, "modelB": modelB, "teacher": teacher}
