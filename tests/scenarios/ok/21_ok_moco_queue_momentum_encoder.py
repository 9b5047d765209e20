"""Control: MoCo-style training for two steps. The key encoder is a frozen copy
updated by momentum under no_grad, keys come from it under no_grad, the queue
is a buffer read through `.clone().detach()` and enqueued by slice assignment
after backward. The query encoder gets a normal gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "moco.enc_q[0].weight"
EXPECT = "grad_ok"


def mlp():
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 16))


class MoCo(nn.Module):
    def __init__(self, K=32, m=0.99, t=0.2):
        super().__init__()
        self.K, self.m, self.t = K, m, t
        self.enc_q, self.enc_k = mlp(), mlp()
        self.enc_k.load_state_dict(self.enc_q.state_dict())
        self.enc_k.requires_grad_(False)
        self.register_buffer("queue", F.normalize(torch.randn(K, 16), dim=1))
        self.ptr = 0

    @torch.no_grad()
    def momentum_update(self):
        for pk, pq in zip(self.enc_k.parameters(), self.enc_q.parameters()):
            pk.mul_(self.m).add_(pq.detach(), alpha=1 - self.m)

    @torch.no_grad()
    def enqueue(self, k):
        self.queue[self.ptr:self.ptr + k.shape[0]] = k
        self.ptr = (self.ptr + k.shape[0]) % self.K

    def forward(self, x1, x2):
        q = F.normalize(self.enc_q(x1), dim=1)
        with torch.no_grad():
            self.momentum_update()
            k = F.normalize(self.enc_k(x2), dim=1)
        l_pos = (q * k).sum(1, keepdim=True)
        l_neg = q @ self.queue.clone().detach().t()
        return torch.cat([l_pos, l_neg], 1) / self.t, k


def run():
    torch.manual_seed(0)
    moco = MoCo()
    opt = torch.optim.SGD(moco.enc_q.parameters(), lr=0.03, momentum=0.9)
    for _ in range(2):
        x = torch.randn(8, 20)
        logits, k = moco(x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
        loss = F.cross_entropy(logits, torch.zeros(8, dtype=torch.long))  # <-- CUT
        opt.zero_grad()
        loss.backward()
        opt.step()
        moco.enqueue(k)
    return {"moco": moco, "opt": opt, "loss": loss}
