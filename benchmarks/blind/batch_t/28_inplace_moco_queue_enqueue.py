"""MoCo: the key batch is enqueued into the queue buffer in place before loss.backward(); the
queue was saved by the logits matmul, so backward raises. Key encoder under no_grad is legitimate.
Thread: MoCo inplace operation error after dequeue_and_enqueue (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "inplace_saved_tensor"
QUERY = None
EXPECT = "backward_error"

class MoCo(nn.Module):
    def __init__(self, K=16):
        super().__init__()
        self.enc_q = nn.Linear(12, 8)
        self.enc_k = nn.Linear(12, 8)
        self.enc_k.load_state_dict(self.enc_q.state_dict())
        self.register_buffer("queue", F.normalize(torch.randn(8, K), dim=0))
        self.ptr = 0
    def forward(self, xq, xk):
        q = F.normalize(self.enc_q(xq), dim=1)
        with torch.no_grad():
            for pq, pk in zip(self.enc_q.parameters(), self.enc_k.parameters()):
                pk.data.mul_(0.999).add_(0.001 * pq.data)
            k = F.normalize(self.enc_k(xk), dim=1)
        logits = torch.cat([(q * k).sum(1, keepdim=True), q @ self.queue], 1) / 0.07
        B = k.shape[0]
        self.queue[:, self.ptr:self.ptr + B] = k.T  # <-- CUT
        self.ptr = (self.ptr + B) % self.queue.shape[1]
        return F.cross_entropy(logits, torch.zeros(B, dtype=torch.long))

def run():
    torch.manual_seed(0)
    moco = MoCo()
    x = torch.randn(8, 12)
    loss = moco(x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
    loss.backward()
    return {"moco": moco}
