"""MoCo with the key encoder forward written outside torch.no_grad() (its
weights are only momentum-updated but still require grad). The keys are pushed
into the negative queue without detach, so the next iteration's InfoNCE loss
backpropagates into the previous step's freed graph.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class MoCo(nn.Module):
    def __init__(self, dim=8, K=32, m=0.99, T=0.2):
        super().__init__()
        self.encoder_q = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, dim))
        self.encoder_k = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, dim))
        self.encoder_k.load_state_dict(self.encoder_q.state_dict())
        self.queue = F.normalize(torch.randn(K, dim), dim=1)
        self.m, self.T, self.K = m, T, K

    @torch.no_grad()
    def momentum_update(self):
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.data = pk.data * self.m + pq.data * (1 - self.m)

    def enqueue(self, k):
        self.queue = torch.cat([k, self.queue], 0)[: self.K]  # <-- CUT

    def forward(self, xq, xk):
        q = F.normalize(self.encoder_q(xq), dim=1)
        self.momentum_update()
        k = F.normalize(self.encoder_k(xk), dim=1)
        l_pos = (q * k).sum(1, keepdim=True)
        l_neg = q @ self.queue.t()
        logits = torch.cat([l_pos, l_neg], 1) / self.T
        loss = F.cross_entropy(logits, torch.zeros(q.shape[0], dtype=torch.long))
        self.enqueue(k)
        return loss


def run():
    torch.manual_seed(0)
    model = MoCo()
    opt = torch.optim.SGD(model.encoder_q.parameters(), lr=0.03, momentum=0.9)
    for step in range(2):
        x = torch.randn(8, 16)
        loss = model(x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"model": model, "loss": loss}
