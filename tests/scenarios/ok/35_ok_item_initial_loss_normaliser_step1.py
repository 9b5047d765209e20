"""Control: the first step's loss is stored with `.item()` as a fixed normaliser
(GradNorm-style "relative loss"), and steps 2 and 3 divide by that float. The
normaliser is a constant on purpose; the model keeps training normally.
"""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_ok"


class Runner:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.05)
        self.init_loss = None

    def step(self, x, y):
        raw = ((self.model(x) - y) ** 2).mean()
        if self.init_loss is None:
            self.init_loss = raw.item()
        loss = raw / self.init_loss  # <-- CUT
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    runner = Runner(model)
    for _ in range(3):
        loss = runner.step(torch.randn(8, 4), torch.randn(8, 1))
    return {"model": model, "loss": loss}
