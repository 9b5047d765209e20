"""Siamese basket-similarity model: baskets are mean-pooled item embeddings (the
padding row of the embedding is zero) and compared with a hand-written cosine.
An empty basket pools to an all-zero vector, so the cosine is 0/0 = nan; under
anomaly detection backward reports "returned nan values" for the division.
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

PAD = 0


class BasketEncoder(nn.Module):
    def __init__(self, n_items=50, dim=16):
        super().__init__()
        self.emb = nn.Embedding(n_items, dim, padding_idx=PAD)

    def forward(self, baskets):
        mask = (baskets != PAD).float().unsqueeze(-1)
        return (self.emb(baskets) * mask).sum(1) / mask.sum(1).clamp(min=1.0)


def cosine(a, b):
    return (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1))  # <-- CUT


def run():
    torch.manual_seed(0)
    enc = BasketEncoder()
    opt = torch.optim.Adam(enc.parameters(), lr=1e-3)
    left = torch.randint(1, 50, (6, 5))
    right = torch.randint(1, 50, (6, 5))
    right[2] = PAD
    label = torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 0.0])
    with torch.autograd.detect_anomaly():
        sim = cosine(enc(left), enc(right))
        loss = ((sim - label) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"enc": enc, "loss": loss}
