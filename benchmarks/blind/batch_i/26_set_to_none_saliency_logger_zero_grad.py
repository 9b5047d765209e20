"""Trainer that logs an input-saliency map every step. log_saliency() is called
between loss.backward() and clip/step and begins with model.zero_grad() to "not
mix gradients"; it then uses autograd.grad for the input only. The parameter
grads were reset to None before clip_grad_norm_ and step: model[0].weight.grad is None.
Thread: SO "Why do we need to call zero_grad() in PyTorch?".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_none"


class Trainer:
    def __init__(self):
        self.model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.saliency_log = []

    def log_saliency(self, x, y):
        self.model.zero_grad()  # <-- CUT
        xi = x[:1].clone().requires_grad_(True)
        score = self.model(xi)[0, y[0]]
        g, = torch.autograd.grad(score, xi)
        self.saliency_log.append(g.abs().squeeze(0))

    def step(self, x, y):
        self.opt.zero_grad()
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.log_saliency(x, y)
        norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        return loss, norm


def run():
    torch.manual_seed(0)
    trainer = Trainer()
    x = torch.randn(10, 6)
    y = torch.randint(0, 2, (10,))
    loss, norm = trainer.step(x, y)
    return {"trainer": trainer, "model": trainer.model, "loss": loss, "norm": norm}
