"""Sequential recommender (GRU4Rec-style) that initialises the item table from item2vec
vectors with nn.Embedding.from_pretrained, meaning to fine-tune them. from_pretrained freezes by
default (freeze=True), so the GRU and output layer train but model.item_emb.weight.grad is None.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.item_emb.weight"
EXPECT = "grad_none"


class GRU4Rec(nn.Module):
    def __init__(self, pretrained, hidden=32, padding_idx=0):
        super().__init__()
        n_items, d = pretrained.shape
        self.item_emb = nn.Embedding.from_pretrained(pretrained, padding_idx=padding_idx)  # <-- CUT
        self.gru = nn.GRU(d, hidden, batch_first=True)
        self.out = nn.Linear(hidden, n_items)

    def forward(self, seq):
        h, _ = self.gru(self.item_emb(seq))
        return self.out(h[:, -1])


def load_item2vec(n_items, d, rng):
    vecs = rng.normal(scale=0.1, size=(n_items, d)).astype(np.float32)
    vecs[0] = 0.0
    return torch.from_numpy(vecs)


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = GRU4Rec(load_item2vec(100, 16, rng))
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    seq = torch.randint(1, 100, (16, 7))
    nxt = torch.randint(1, 100, (16,))
    loss = F.cross_entropy(model(seq), nxt)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
