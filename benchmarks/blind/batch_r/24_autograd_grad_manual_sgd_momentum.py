"""Hand-written SGD with momentum: the training step gets the gradients with
torch.autograd.grad(loss, params) and updates under no_grad, but the gradient-norm logger
(and a later clip_grad_norm_) read p.grad, which autograd.grad never fills: it stays None.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_none"


class MomentumSGD:
    def __init__(self, params, lr=0.05, momentum=0.9):
        self.params = list(params)
        self.lr, self.mu = lr, momentum
        self.buf = [torch.zeros_like(p) for p in self.params]

    def step(self, loss):
        grads = torch.autograd.grad(loss, self.params)  # <-- CUT
        with torch.no_grad():
            for p, g, b in zip(self.params, grads, self.buf):
                b.mul_(self.mu).add_(g)
                p.sub_(self.lr * b)

    def grad_norm(self):
        norms = [p.grad.norm() for p in self.params if p.grad is not None]
        return torch.stack(norms).norm().item() if norms else 0.0


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = MomentumSGD(model.parameters())
    x = torch.randn(16, 3)
    y = x.sum(1, keepdim=True)
    loss = ((model(x) - y) ** 2).mean()
    opt.step(loss)
    logged = opt.grad_norm()
    return {"model": model, "opt": opt, "loss": loss, "logged": logged}
