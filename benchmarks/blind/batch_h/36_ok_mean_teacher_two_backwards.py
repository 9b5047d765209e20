"""Control. Semi-supervised step with two losses on a shared encoder, backpropagated
separately as the forum answer describes: the first backward uses retain_graph=True, the
last does not. The teacher is a copy filled by load_state_dict and queried under
torch.no_grad(); losses are logged with .item(). The encoder gets normal gradients.
Thread: discuss.pytorch.org/t/runtimeerror-trying-to-backward-through-the-graph-a-second-time-.../6795
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student.encoder[0].weight"
EXPECT = "grad_ok"


class Net(nn.Module):
    def __init__(self, d_in=6, n_cls=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU())
        self.cls = nn.Linear(32, n_cls)

    def forward(self, x):
        return self.cls(self.encoder(x))


def run():
    torch.manual_seed(0)
    student = Net()
    teacher = Net()
    teacher.load_state_dict(student.state_dict())
    for p in teacher.parameters():
        p.requires_grad_(False)
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    x_lab, y_lab = torch.randn(8, 6), torch.randint(0, 3, (8,))
    x_unl = torch.randn(8, 6)
    noisy = x_unl + 0.1 * torch.randn_like(x_unl)
    logits_lab = student(x_lab)
    logits_unl = student(noisy)
    with torch.no_grad():
        soft = F.softmax(teacher(x_unl), dim=-1)
    sup_loss = F.cross_entropy(logits_lab, y_lab)  # <-- CUT
    cons_loss = F.mse_loss(F.softmax(logits_unl, dim=-1), soft)
    opt.zero_grad()
    sup_loss.backward(retain_graph=True)
    cons_loss.backward()
    opt.step()
    logs = {"sup": sup_loss.item(), "cons": cons_loss.item()}
    return {"student": student, "teacher": teacher, "logs": logs, "sup_loss": sup_loss}
