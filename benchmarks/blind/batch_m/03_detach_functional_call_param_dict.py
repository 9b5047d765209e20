"""Classifier trained through torch.func.functional_call, with the params dict built
as in the per-sample-gradient tutorial: `{k: v.detach() ...}`. The loss still has a
grad_fn through the learned temperature, so backward runs and the temperature
trains, but none of the model's own parameters gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.weight"
EXPECT = "grad_none"


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.bn = nn.BatchNorm1d(32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.bn(self.fc1(x))))


class FunctionalTrainer:
    def __init__(self, model):
        self.model = model
        self.log_temp = nn.Parameter(torch.zeros(()))
        self.opt = torch.optim.SGD(list(model.parameters()) + [self.log_temp], lr=0.1)

    def state(self):
        params = {k: v.detach() for k, v in self.model.named_parameters()}  # <-- CUT
        buffers = {k: v for k, v in self.model.named_buffers()}
        return params, buffers

    def loss_fn(self, params, buffers, x, y):
        logits = functional_call(self.model, (params, buffers), (x,))
        return F.cross_entropy(logits / self.log_temp.exp(), y)

    def step(self, x, y):
        params, buffers = self.state()
        loss = self.loss_fn(params, buffers, x, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    model = MLP()
    trainer = FunctionalTrainer(model)
    x, y = torch.randn(16, 10), torch.randint(0, 4, (16,))
    loss = trainer.step(x, y)
    return {"model": model, "trainer": trainer, "loss": loss}
