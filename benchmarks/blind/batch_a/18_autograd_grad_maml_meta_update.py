"""MAML meta-update (katerakelly/pytorch-maml#8): meta-gradients are obtained
with torch.autograd.grad(loss, self.net.parameters()); the repo then copies them
into .grad via a dummy backward with hooks. A re-implementation drops that part
and calls meta_opt.step() directly: self.net[0].weight.grad is None, no update.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "learner.net[0].weight"
EXPECT = "grad_none"


def functional_forward(x, weights):
    x = F.relu(F.linear(x, weights[0], weights[1]))
    return F.linear(x, weights[2], weights[3])


class MetaLearner:
    def __init__(self, inner_lr=0.1, meta_lr=1e-3, num_updates=1):
        self.net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
        self.inner_lr, self.num_updates = inner_lr, num_updates
        self.meta_opt = torch.optim.Adam(self.net.parameters(), lr=meta_lr)

    def inner_loop(self, x_tr, y_tr):
        fast_weights = list(self.net.parameters())
        for _ in range(self.num_updates):
            loss = F.cross_entropy(functional_forward(x_tr, fast_weights), y_tr)
            grads = torch.autograd.grad(loss, fast_weights, create_graph=True)
            fast_weights = [w - self.inner_lr * g for w, g in zip(fast_weights, grads)]
        return fast_weights

    def meta_update(self, tasks):
        self.meta_opt.zero_grad()
        meta_loss = 0.0
        for x_tr, y_tr, x_val, y_val in tasks:
            fast_weights = self.inner_loop(x_tr, y_tr)
            meta_loss = meta_loss + F.cross_entropy(functional_forward(x_val, fast_weights), y_val)
        meta_grads = torch.autograd.grad(meta_loss / len(tasks), self.net.parameters())  # <-- CUT
        self.meta_opt.step()
        return meta_loss, meta_grads


def run():
    torch.manual_seed(0)
    learner = MetaLearner()
    tasks = [(torch.randn(6, 4), torch.randint(0, 3, (6,)), torch.randn(6, 4), torch.randint(0, 3, (6,)))
             for _ in range(2)]
    meta_loss, meta_grads = learner.meta_update(tasks)
    return {"learner": learner, "meta_loss": meta_loss, "meta_grads": meta_grads}
