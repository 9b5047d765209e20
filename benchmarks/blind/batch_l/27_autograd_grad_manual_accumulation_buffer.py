"""Gradient accumulation written with torch.autograd.grad into a private buffer "so no
stray .grad is left behind by the validation code". The buffers are summed over the
micro-batches and clipped, but never copied into p.grad, so optimizer.step() sees None
grads and does nothing; no error is raised.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_none"


class Accumulator:
    def __init__(self, model, accum_steps=4, max_norm=1.0):
        self.model = model
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.buf = [torch.zeros_like(p) for p in self.params]
        self.accum_steps, self.max_norm = accum_steps, max_norm
        self.opt = torch.optim.AdamW(self.params, lr=1e-3)

    def micro_step(self, x, y):
        loss = F.cross_entropy(self.model(x), y) / self.accum_steps
        grads = torch.autograd.grad(loss, self.params)  # <-- CUT
        for b, g in zip(self.buf, grads):
            b.add_(g)
        return loss.item()

    def apply(self):
        total = torch.sqrt(sum((b ** 2).sum() for b in self.buf))
        scale = min(1.0, self.max_norm / (total.item() + 1e-6))
        for b in self.buf:
            b.mul_(scale)
        self.opt.step()
        self.opt.zero_grad()
        for b in self.buf:
            b.zero_()


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 5))
    acc = Accumulator(model)
    losses = []
    for _ in range(acc.accum_steps):
        x, y = torch.randn(8, 12), torch.randint(0, 5, (8,))
        losses.append(acc.micro_step(x, y))
    acc.apply()
    return {"model": model, "acc": acc, "losses": losses}
