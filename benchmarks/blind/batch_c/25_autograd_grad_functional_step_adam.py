"""Functional-style training step (functorch habits): the loss is computed with
torch.func.functional_call on a params dict and the gradients with
torch.autograd.grad(loss, params), then a torch.optim.Adam step is called. autograd.grad
returns the gradients instead of storing them in .grad, so Adam skips every parameter.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.net[0].weight"
EXPECT = "grad_none"


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


def loss_fn(model, params, x, y):
    pred = functional_call(model, params, (x,))
    return F.mse_loss(pred, y)


def train_step(model, params, optimizer, x, y, max_norm=1.0):
    loss = loss_fn(model, params, x, y)
    grads = torch.autograd.grad(loss, list(params.values()))  # <-- CUT
    total_norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
    scale = min(1.0, max_norm / (total_norm.item() + 1e-6))
    grads = [g * scale for g in grads]
    optimizer.step()
    optimizer.zero_grad()
    return loss.detach(), total_norm, grads


def run():
    torch.manual_seed(0)
    model = Regressor()
    params = dict(model.named_parameters())
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.randn(16, 4)
    y = x.sum(dim=1, keepdim=True)
    history = []
    for _ in range(3):
        loss, total_norm, grads = train_step(model, params, optimizer, x, y)
        history.append(loss.item())
    return {"model": model, "params": params, "optimizer": optimizer, "history": history, "grads": grads}
