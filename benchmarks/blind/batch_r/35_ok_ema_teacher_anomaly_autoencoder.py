"""Control: student-teacher anomaly detector. The teacher is a clone of the student updated
as an EMA through `.data` under no_grad, its targets are computed under no_grad, and losses
are logged with .item(). All of this is intended; the student encoder trains normally.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student.encoder[0].weight"
EXPECT = "grad_ok"


class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 6), nn.ReLU(), nn.Linear(6, 3))
        self.decoder = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 10))

    def forward(self, x):
        z = self.encoder(x)
        return z, self.decoder(z)


@torch.no_grad()
def ema_update(teacher, student, m=0.99):
    for pt, ps in zip(teacher.parameters(), student.parameters()):
        pt.data.mul_(m).add_(ps.data, alpha=1 - m)


def run():
    torch.manual_seed(0)
    student = AE()
    teacher = AE()
    teacher.load_state_dict(student.state_dict())
    for p in teacher.parameters():
        p.requires_grad_(False)
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    x = torch.randn(16, 10)
    with torch.no_grad():
        z_t, _ = teacher(x)
    z_s, recon = student(x)
    loss = ((recon - x) ** 2).mean() + 0.5 * ((z_s - z_t) ** 2).mean()  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema_update(teacher, student)
    log = {"loss": loss.item(), "z_norm": z_s.detach().norm().item()}
    return {"student": student, "teacher": teacher, "loss": loss, "log": log}
