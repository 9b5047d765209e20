"""MoCo v1: the key encoder gets no gradient on purpose. Keys are computed under
torch.no_grad(), the key encoder is updated by a momentum rule through .data and
the queue is filled in place; the query encoder still gets its gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "moco.encoder_q[0].weight"
EXPECT = "grad_ok"


class MoCo(nn.Module):
    def __init__(self, dim=8, K=16, m=0.999, T=0.07):
        super().__init__()
        self.K, self.m, self.T = K, m, T
        self.encoder_q = self.make_encoder(dim)
        self.encoder_k = self.make_encoder(dim)
        self.encoder_k.load_state_dict(self.encoder_q.state_dict())
        for p in self.encoder_k.parameters():
            p.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @staticmethod
    def make_encoder(dim):
        return nn.Sequential(nn.Linear(12, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, dim))

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.data = pk.data * self.m + pq.data * (1.0 - self.m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        ptr = int(self.queue_ptr)
        self.queue[:, ptr:ptr + keys.shape[0]] = keys.T
        self.queue_ptr[0] = (ptr + keys.shape[0]) % self.K

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update_key_encoder()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", q, self.queue.clone().detach())
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long)
        self._dequeue_and_enqueue(k)
        return logits, labels


def run():
    torch.manual_seed(0)
    moco = MoCo()
    opt = torch.optim.SGD(moco.encoder_q.parameters(), lr=0.03, momentum=0.9)
    x = torch.randn(8, 12)
    logits, labels = moco(x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
    loss = F.cross_entropy(logits, labels)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"moco": moco, "loss": loss, "acc": (logits.argmax(1) == labels).float().mean().item()}
