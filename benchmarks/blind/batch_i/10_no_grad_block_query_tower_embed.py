"""Dual-encoder retrieval trainer. Queries are encoded with embed_queries(), a
helper written for building the search index, which wraps the tower in
torch.no_grad(). The document tower and the temperature train; the query tower
never does: model.q_tower[0].weight.grad is None.
Thread: SO 60018578 "What does model.eval() do in pytorch?" (eval vs no_grad answers).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.q_tower[0].weight"
EXPECT = "grad_none"


class DualEncoder(nn.Module):
    def __init__(self, d_q=10, d_d=14, d=16):
        super().__init__()
        self.q_tower = nn.Sequential(nn.Linear(d_q, 32), nn.ReLU(), nn.Linear(32, d))
        self.d_tower = nn.Sequential(nn.Linear(d_d, 32), nn.ReLU(), nn.Linear(32, d))
        self.log_tau = nn.Parameter(torch.tensor(-2.0))

    def embed_queries(self, q):
        with torch.no_grad():
            z = self.q_tower(q)  # <-- CUT
        return F.normalize(z, dim=-1)

    def embed_docs(self, d):
        return F.normalize(self.d_tower(d), dim=-1)


class RetrievalTrainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step(self, q, d):
        zq = self.model.embed_queries(q)
        zd = self.model.embed_docs(d)
        logits = zq @ zd.t() / self.model.log_tau.exp()
        labels = torch.arange(q.size(0))
        loss = F.cross_entropy(logits, labels)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    model = DualEncoder()
    trainer = RetrievalTrainer(model)
    loss = trainer.step(torch.randn(8, 10), torch.randn(8, 14))
    return {"model": model, "trainer": trainer, "loss": loss}
