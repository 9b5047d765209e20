"""MoCo: the query encoder call was put in the same no_grad block as the momentum key encoder.
The key encoder under no_grad and its momentum update through .data are correct; encoder_q gets no grad.
Thread: MoCo encoder_q weights not changing (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "no_grad_block"
QUERY = 'moco.encoder_q[0].weight'
EXPECT = "grad_none"

class MoCo(nn.Module):
    def __init__(self, dim=8, K=32, m=0.999, T=0.2):
        super().__init__()
        self.encoder_q = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, dim))
        self.encoder_k = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, dim))
        self.encoder_k.load_state_dict(self.encoder_q.state_dict())
        for p in self.encoder_k.parameters():
            p.requires_grad = False
        self.head = nn.Linear(dim, dim)
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.m, self.T = m, T
    @torch.no_grad()
    def _momentum_update(self):
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.data = pk.data * self.m + pq.data * (1 - self.m)
    def forward(self, im_q, im_k):
        with torch.no_grad():
            self._momentum_update()
            k = F.normalize(self.encoder_k(im_k), dim=1)
            feat_q = self.encoder_q(im_q)  # <-- CUT
        q = F.normalize(self.head(feat_q), dim=1)
        l_pos = (q * k).sum(1, keepdim=True)
        l_neg = q @ self.queue.clone().detach()
        logits = torch.cat([l_pos, l_neg], 1) / self.T
        return F.cross_entropy(logits, torch.zeros(len(q), dtype=torch.long))

def run():
    torch.manual_seed(0)
    moco = MoCo()
    x = torch.randn(8, 12)
    loss = moco(x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
    loss.backward()
    return {"moco": moco}
