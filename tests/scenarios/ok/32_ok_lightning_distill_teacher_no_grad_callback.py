"""Control: Lightning-style distillation module. The teacher forward is under
`torch.no_grad()`, the student is outside it, and a callback zeroes grads in
`on_train_batch_start` (before the forward). The student trains normally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.student[0].weight"
EXPECT = "grad_ok"


class Distill(nn.Module):
    def __init__(self):
        super().__init__()
        self.teacher = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Linear(24, 4)).requires_grad_(False)
        self.student = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4))

    def training_step(self, batch):
        x, y = batch
        with torch.no_grad():
            t = self.teacher(x)
        s = self.student(x)
        loss = F.cross_entropy(s, y) + F.mse_loss(s, t)  # <-- CUT
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.student.parameters(), lr=1e-3)


class ZeroGradCallback:
    def on_train_batch_start(self, model, opt):
        opt.zero_grad(set_to_none=True)


def run():
    torch.manual_seed(0)
    model = Distill()
    opt = model.configure_optimizers()
    cbs = [ZeroGradCallback()]
    batch = (torch.randn(12, 6), torch.randint(0, 4, (12,)))
    for cb in cbs:
        cb.on_train_batch_start(model, opt)
    loss = model.training_step(batch)
    loss.backward()
    return {"model": model, "loss": loss}
