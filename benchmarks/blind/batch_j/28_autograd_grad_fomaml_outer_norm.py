"""First-order MAML trainer. The inner loop correctly uses torch.autograd.grad for the fast
weights. For the outer step the user also wanted the meta-gradient norm for logging, so the
meta-loss goes through torch.autograd.grad(meta_loss, net.parameters()) instead of backward().
The gradients are returned, not accumulated: meta_opt.step() sees .grad None everywhere.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.net[0].weight"
EXPECT = "grad_none"


class FOMAMLTrainer:
    def __init__(self, inner_lr=0.05, inner_steps=2):
        self.net = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 2))
        self.meta_opt = torch.optim.Adam(self.net.parameters(), lr=1e-3)
        self.inner_lr, self.inner_steps = inner_lr, inner_steps
        self.log = []

    def adapt(self, x, y):
        params = dict(self.net.named_parameters())
        for _ in range(self.inner_steps):
            loss = F.cross_entropy(functional_call(self.net, params, (x,)), y)
            grads = torch.autograd.grad(loss, list(params.values()))
            params = {n: p - self.inner_lr * g.detach() for (n, p), g in zip(params.items(), grads)}
        return params

    def meta_step(self, tasks):
        self.meta_opt.zero_grad()
        meta_loss = 0.0
        for xs, ys, xq, yq in tasks:
            fast = self.adapt(xs, ys)
            meta_loss = meta_loss + F.cross_entropy(functional_call(self.net, fast, (xq,)), yq)
        meta_grads = torch.autograd.grad(meta_loss, list(self.net.parameters()))  # <-- CUT
        self.log.append(torch.sqrt(sum((g ** 2).sum() for g in meta_grads)).item())
        self.meta_opt.step()
        return meta_loss.item()


def run():
    torch.manual_seed(0)
    trainer = FOMAMLTrainer()
    tasks = [(torch.randn(6, 2), torch.randint(0, 2, (6,)), torch.randn(6, 2), torch.randint(0, 2, (6,)))
             for _ in range(3)]
    loss = trainer.meta_step(tasks)
    return {"trainer": trainer, "loss": loss}
