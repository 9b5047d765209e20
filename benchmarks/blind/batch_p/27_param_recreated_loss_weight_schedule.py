"""Multi-task forecaster with learnable task weights (uncertainty weighting). A
"weight scheduler" re-initialises the weights each epoch by assigning a new
nn.Parameter, after the optimizer was built, so the optimizer still holds the old
tensor, which never receives a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][0]"
EXPECT = "grad_none"


class MultiHorizon(nn.Module):
    def __init__(self, w=12, d=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(w, d), nn.ReLU())
        self.h1, self.h7 = nn.Linear(d, 1), nn.Linear(d, 1)
        self.log_vars = nn.Parameter(torch.zeros(2))

    def forward(self, x):
        z = self.body(x)
        return self.h1(z), self.h7(z)


class LossWeightScheduler:
    def __init__(self, model, warm=(0.0, 1.0)):
        self.model, self.warm = model, warm

    def step(self, epoch):
        start = torch.tensor(self.warm) * min(1.0, epoch / 5)
        self.model.log_vars = nn.Parameter(start.clone())  # <-- CUT


def run():
    torch.manual_seed(0)
    model = MultiHorizon()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = LossWeightScheduler(model)
    x = torch.randn(16, 12)
    y1, y7 = x[:, -1:] * 0.9, x[:, -1:] * 0.5
    for epoch in range(2):
        sched.step(epoch)
        p1, p7 = model(x)
        lv = model.log_vars
        loss = torch.exp(-lv[0]) * F.mse_loss(p1, y1) + lv[0] + torch.exp(-lv[1]) * F.mse_loss(p7, y7) + lv[1]
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"model": model, "opt": opt, "loss": loss}
