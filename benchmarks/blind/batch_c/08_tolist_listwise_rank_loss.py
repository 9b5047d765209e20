"""Search ranker with a ListNet ranking loss and a pointwise click loss. The ranking
loss first raised "Can't call numpy() on Tensor that requires grad", so it was
rewritten on scores.tolist(), which works silently. The shared encoder still trains
through the click loss, but the ranking head never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.rank_head.weight"
EXPECT = "grad_none"

E = 2.718281828459045


class Ranker(nn.Module):
    def __init__(self, n_feat=12, hidden=32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_feat, hidden), nn.ReLU())
        self.rank_head = nn.Linear(hidden, 1)
        self.ctr_head = nn.Linear(hidden, 1)

    def forward(self, docs):
        h = self.encoder(docs)
        return self.rank_head(h).squeeze(-1), self.ctr_head(h).squeeze(-1)


def listnet_loss(scores, relevance):
    """Top-one ListNet cross entropy, one list per query (row)."""
    scores_list = scores.tolist()  # <-- CUT
    rel_list = relevance.tolist()
    losses = []
    for s_row, r_row in zip(scores_list, rel_list):
        z_s = sum(E ** s for s in s_row)
        z_r = sum(E ** r for r in r_row)
        ce = 0.0
        for s, r in zip(s_row, r_row):
            p_true = E ** r / z_r
            ce -= p_true * (s - torch.log(torch.tensor(z_s)).item())
        losses.append(ce)
    return torch.tensor(sum(losses) / len(losses))


def run():
    torch.manual_seed(0)
    model = Ranker()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    docs = torch.randn(4, 6, 12)            # 4 queries x 6 candidate documents
    relevance = torch.randint(0, 3, (4, 6)).float()
    clicks = (relevance > 1).float()
    rank_scores, ctr_logits = model(docs)
    loss = listnet_loss(rank_scores, relevance) + F.binary_cross_entropy_with_logits(ctr_logits, clicks)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "optimizer": optimizer, "loss": loss}
