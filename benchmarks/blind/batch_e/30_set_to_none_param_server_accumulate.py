"""Batch-update parameter server (pytorch/examples#1172): each trainer's gradients are
accumulated into the server model, and the server calls `model.zero_grad()` at the
start of every update round. Since PyTorch 2.0 zero_grad() sets .grad to None, so
the round that runs right after the local backward wipes the gradient the server is
about to read and accumulate (the example then crashed with a TypeError).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "ps.model[0].weight"
EXPECT = "grad_none"


class BatchUpdateParameterServer:
    def __init__(self, batch_update_size=2):
        self.model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.batch_update_size = batch_update_size
        self.curr_update_size = 0
        self.acc = [torch.zeros_like(p) for p in self.model.parameters()]

    def begin_round(self):
        self.model.zero_grad()  # <-- CUT
        self.curr_update_size = 0

    def local_backward(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        return loss

    def snapshot_grads(self):
        return [p.grad for p in self.model.parameters()]

    def update_and_fetch_model(self, grads):
        for a, g in zip(self.acc, grads):
            if g is not None:
                a += g
        self.curr_update_size += 1
        if self.curr_update_size >= self.batch_update_size:
            for p, a in zip(self.model.parameters(), self.acc):
                p.grad = a / self.batch_update_size
            self.optimizer.step()
        return self.model


def run():
    torch.manual_seed(0)
    ps = BatchUpdateParameterServer()
    x = torch.randn(4, 8)
    y = torch.randint(0, 3, (4,))
    loss = ps.local_backward(x, y)
    ps.begin_round()
    grads = ps.snapshot_grads()
    ps.update_and_fetch_model(grads)
    return {"ps": ps, "loss": loss, "grads": grads}
