"""Poincare embeddings for a taxonomy: the distance is arcosh(1 + 2|u-v|^2 /
((1-|u|^2)(1-|v|^2))). Uniform negative sampling sometimes draws the anchor
itself, where the argument is exactly 1 and arcosh's derivative is infinite;
the embedding gradient becomes NaN.
"""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.emb.weight"
EXPECT = "grad_nonfinite"


class PoincareEmbedding(nn.Module):
    def __init__(self, n=12, d=2):
        super().__init__()
        self.emb = nn.Embedding(n, d)
        nn.init.uniform_(self.emb.weight, -1e-3, 1e-3)

    def dist(self, u, v):
        sq = ((u - v) ** 2).sum(-1)
        nu, nv = (u ** 2).sum(-1), (v ** 2).sum(-1)
        x = 1 + 2 * sq / ((1 - nu) * (1 - nv))
        return torch.acosh(x)  # <-- CUT

    def forward(self, anchor, cands):
        u = self.emb(anchor).unsqueeze(1)
        return -self.dist(u, self.emb(cands))


def run():
    torch.manual_seed(0)
    model = PoincareEmbedding()
    anchor = torch.tensor([0, 1, 2, 3])
    pos = torch.tensor([4, 5, 6, 7])
    negs = torch.tensor([[8, 9], [1, 10], [11, 8], [9, 10]])
    cands = torch.cat([pos.unsqueeze(1), negs], 1)
    logits = model(anchor, cands)
    loss = nn.functional.cross_entropy(logits, torch.zeros(4, dtype=torch.long))
    loss.backward()
    return {"model": model, "loss": loss}
