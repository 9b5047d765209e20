"""MoCo-style contrastive learning. The key encoder (filled by load_state_dict, frozen,
EMA-updated through .data under no_grad) and the no_grad keys are correct. The negative
logits use q @ self.queue.t() without .clone().detach(), and forward enqueues the new
keys into the queue buffer in place before returning; loss.backward() then raises
because the matmul's saved queue view was modified.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Encoder(nn.Module):
    def __init__(self, d_in=24, d=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU(), nn.Linear(32, d))

    def forward(self, x):
        return F.normalize(self.net(x), dim=-1)


class MoCo(nn.Module):
    def __init__(self, K=32, m=0.99, T=0.07):
        super().__init__()
        self.enc_q, self.enc_k = Encoder(), Encoder()
        self.enc_k.load_state_dict(self.enc_q.state_dict())
        self.enc_k.requires_grad_(False)
        self.register_buffer("queue", F.normalize(torch.randn(K, 16), dim=-1))
        self.m, self.T, self.ptr = m, T, 0

    @torch.no_grad()
    def momentum_update(self):
        for pq, pk in zip(self.enc_q.parameters(), self.enc_k.parameters()):
            pk.data = pk.data * self.m + pq.data * (1.0 - self.m)

    @torch.no_grad()
    def enqueue(self, k):
        n = k.size(0)
        self.queue[self.ptr:self.ptr + n] = k.detach()  # <-- CUT
        self.ptr = (self.ptr + n) % self.queue.size(0)

    def forward(self, x_q, x_k):
        q = self.enc_q(x_q)
        with torch.no_grad():
            self.momentum_update()
            k = self.enc_k(x_k)
        l_pos = (q * k).sum(-1, keepdim=True)
        l_neg = q @ self.queue.t()
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(q.size(0), dtype=torch.long)
        loss = F.cross_entropy(logits, labels)
        self.enqueue(k)
        return loss


def run():
    torch.manual_seed(0)
    moco = MoCo()
    opt = torch.optim.SGD(moco.enc_q.parameters(), lr=0.03, momentum=0.9)
    x = torch.randn(8, 24)
    loss = moco(x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"moco": moco, "loss": loss.item()}
