"""Matrix-factorisation recommender trained with a hand-rolled BPR loss. The loss helper
turns the positive and negative scores into Python lists to skip already-ranked pairs,
computes -log(sigmoid(diff)) per pair in Python and rebuilds a tensor: mf.user_emb.weight.grad is None.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "mf.user_emb.weight"
EXPECT = "grad_none"


class MF(nn.Module):
    def __init__(self, n_users, n_items, k=8):
        super().__init__()
        self.user_emb, self.item_emb = nn.Embedding(n_users, k), nn.Embedding(n_items, k)
        nn.init.normal_(self.user_emb.weight, std=0.1)
        nn.init.normal_(self.item_emb.weight, std=0.1)

    def score(self, u, i):
        return (self.user_emb(u) * self.item_emb(i)).sum(-1)


def bpr_loss(pos, neg, margin_skip=5.0):
    pos_l, neg_l = pos.tolist(), neg.tolist()  # <-- CUT
    terms = []
    for p, n in zip(pos_l, neg_l):
        diff = p - n
        if diff > margin_skip:
            continue
        terms.append(-float(np.log(1.0 / (1.0 + np.exp(-diff)) + 1e-10)))
    return torch.tensor(sum(terms) / max(len(terms), 1), requires_grad=True)


def run():
    torch.manual_seed(0)
    mf = MF(20, 50)
    opt = torch.optim.SGD(mf.parameters(), lr=0.05, weight_decay=1e-4)
    users = torch.randint(0, 20, (64,))
    pos_items = torch.randint(0, 50, (64,))
    neg_items = torch.randint(0, 50, (64,))
    loss = bpr_loss(mf.score(users, pos_items), mf.score(users, neg_items))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"mf": mf, "loss": loss}
