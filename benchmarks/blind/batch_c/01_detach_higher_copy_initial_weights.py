"""MAML on sine regression with a higher-style innerloop_ctx. The helper copies the
initial weights (copy_initial_weights=True by default) with detach().clone(), so the
fast weights are fresh leaves: the meta-loss backward fills the copies and the meta
model's own weights never get a gradient, model.net[0].weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.net[0].weight"
EXPECT = "grad_none"


class SineRegressor(nn.Module):
    def __init__(self, hidden=40):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


class FunctionalModel:
    """Runs the module's layers with an explicit list of (fast) weights."""

    def __init__(self, module, params):
        self.module = module
        self.params = params

    def __call__(self, x):
        w1, b1, w2, b2, w3, b3 = self.params
        h = F.relu(F.linear(x, w1, b1))
        h = F.relu(F.linear(h, w2, b2))
        return F.linear(h, w3, b3)


class DifferentiableSGD:
    def __init__(self, fmodel, lr):
        self.fmodel = fmodel
        self.lr = lr

    def step(self, loss):
        grads = torch.autograd.grad(loss, self.fmodel.params, create_graph=True)
        self.fmodel.params = [w - self.lr * g for w, g in zip(self.fmodel.params, grads)]


def innerloop_ctx(model, inner_lr, copy_initial_weights=True):
    params = list(model.parameters())
    if copy_initial_weights:
        params = [p.detach().clone().requires_grad_() for p in params]  # <-- CUT
    fmodel = FunctionalModel(model, params)
    return fmodel, DifferentiableSGD(fmodel, inner_lr)


def sample_task(n=10):
    amp = torch.rand(1) * 4.9 + 0.1
    phase = torch.rand(1) * 3.14
    x = torch.rand(2 * n, 1) * 10 - 5
    y = amp * torch.sin(x + phase)
    return x[:n], y[:n], x[n:], y[n:]


def run():
    torch.manual_seed(0)
    model = SineRegressor()
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    meta_opt.zero_grad()
    meta_loss = 0.0
    for _ in range(4):
        x_s, y_s, x_q, y_q = sample_task()
        fmodel, diffopt = innerloop_ctx(model, inner_lr=0.01)
        for _ in range(2):
            diffopt.step(F.mse_loss(fmodel(x_s), y_s))
        meta_loss = meta_loss + F.mse_loss(fmodel(x_q), y_q)
    meta_loss = meta_loss / 4
    meta_loss.backward()
    meta_opt.step()
    return {"model": model, "meta_opt": meta_opt, "meta_loss": meta_loss}
