"""Control: MoCo done right. The key encoder runs under torch.no_grad(), is
updated by momentum through .data, and keys are enqueued with .detach().clone();
the loss is logged with .item(). The query encoder gets a normal gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder_q[0].weight"
EXPECT = "grad_ok"


class MoCo(nn.Module):
    def __init__(self, dim=8, K=32, m=0.999, T=0.07):
        super().__init__()
        self.encoder_q = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, dim))
        self.encoder_k = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, dim))
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.data.copy_(pq.data)
            pk.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(K, dim), dim=1))
        self.m, self.T, self.K, self.ptr = m, T, K, 0

    @torch.no_grad()
    def _momentum_update(self):
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.data = pk.data * self.m + pq.data * (1.0 - self.m)

    @torch.no_grad()
    def _enqueue(self, k):
        n = k.shape[0]
        self.queue[self.ptr:self.ptr + n] = k.detach().clone()
        self.ptr = (self.ptr + n) % self.K

    def forward(self, xq, xk):
        q = F.normalize(self.encoder_q(xq), dim=1)
        with torch.no_grad():
            self._momentum_update()
            k = F.normalize(self.encoder_k(xk), dim=1)
        logits = torch.cat([(q * k).sum(1, keepdim=True), q @ self.queue.clone().t()], 1) / self.T
        loss = F.cross_entropy(logits, torch.zeros(q.shape[0], dtype=torch.long))  # <-- CUT
        self._enqueue(k)
        return loss


def run():
    torch.manual_seed(0)
    model = MoCo()
    opt = torch.optim.SGD(model.encoder_q.parameters(), lr=0.03, momentum=0.9)
    history = []
    x = torch.randn(8, 16)
    loss = model(x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
    opt.zero_grad()
    loss.backward()
    history.append(loss.item())
    return {"model": model, "loss": loss, "history": history}
