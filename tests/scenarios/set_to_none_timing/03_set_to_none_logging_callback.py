"""A training loop with a list of callbacks run after backward. The
gradient-norm logger ends with `self.opt.zero_grad()` "to leave things clean
for the next step", so by the time the loop calls opt.step() every gradient
has been reset to None and nothing is updated.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.weight"
EXPECT = "grad_none"


class GradNormLogger:
    def __init__(self, model, opt):
        self.model, self.opt = model, opt
        self.history = []

    def on_after_backward(self, step):
        norms = [p.grad.norm() for p in self.model.parameters() if p.grad is not None]
        self.history.append((step, torch.stack(norms).norm().item()))
        self.opt.zero_grad()  # <-- CUT


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 24)
        self.fc2 = nn.Linear(24, 2)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


def run():
    torch.manual_seed(0)
    model = MLP()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    callbacks = [GradNormLogger(model, opt)]
    x = torch.randn(20, 6)
    y = torch.randint(0, 2, (20,))
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    for cb in callbacks:
        cb.on_after_backward(step=0)
    opt.step()
    return {"model": model, "opt": opt, "loss": loss, "callbacks": callbacks}
