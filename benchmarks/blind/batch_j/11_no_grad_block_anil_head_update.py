"""ANIL-style meta-learning: only the linear head is adapted in the inner loop, the body is
shared. To "save memory" the fast-weight update of the head is written under torch.no_grad(),
which makes the adapted head a constant. The query loss still trains the body, but the meta
head parameters get no gradient.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "learner.head_w"
EXPECT = "grad_none"


class ANILLearner(nn.Module):
    def __init__(self, in_dim=8, feat=16, n_way=3, inner_lr=0.1):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_dim, feat), nn.ReLU(), nn.Linear(feat, feat), nn.ReLU())
        self.head_w = nn.Parameter(torch.randn(n_way, feat) * 0.1)
        self.head_b = nn.Parameter(torch.zeros(n_way))
        self.inner_lr = inner_lr

    def inner_update(self, head, grads):
        with torch.no_grad():
            return [p - self.inner_lr * g for p, g in zip(head, grads)]  # <-- CUT

    def adapt(self, feats_s, y_s, steps=1):
        head = [self.head_w, self.head_b]
        for _ in range(steps):
            loss = F.cross_entropy(F.linear(feats_s, *head), y_s)
            grads = torch.autograd.grad(loss, head, create_graph=True)
            head = self.inner_update(head, grads)
        return head


def run():
    torch.manual_seed(0)
    learner = ANILLearner()
    meta_opt = torch.optim.Adam(learner.parameters(), lr=1e-3)
    meta_opt.zero_grad()
    total = 0.0
    for _ in range(2):
        x_s, y_s = torch.randn(9, 8), torch.arange(3).repeat(3)
        x_q, y_q = torch.randn(9, 8), torch.arange(3).repeat(3)
        head = learner.adapt(learner.body(x_s), y_s)
        total = total + F.cross_entropy(F.linear(learner.body(x_q), *head), y_q)
    total.backward()
    meta_opt.step()
    return {"learner": learner, "total": total}
