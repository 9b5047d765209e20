"""Recommender trained with a hand-written pairwise hinge ranking loss. The loss
loops over scores.tolist() in Python to build the hinge sum and rewraps the
float with torch.tensor, so the loss has no graph and loss.backward() raises
("element 0 of tensors does not require grad").
"""
import torch
import torch.nn as nn

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class MFScorer(nn.Module):
    def __init__(self, n_users=30, n_items=50, d=8):
        super().__init__()
        self.user_emb = nn.Embedding(n_users, d)
        self.item_emb = nn.Embedding(n_items, d)

    def forward(self, u, items):
        return (self.user_emb(u)[:, None, :] * self.item_emb(items)).sum(-1)


def pairwise_hinge(scores, labels, margin=1.0):
    rows = scores.tolist()  # <-- CUT
    total, count = 0.0, 0
    for row, lab in zip(rows, labels.tolist()):
        for i, (si, li) in enumerate(zip(row, lab)):
            for sj, lj in zip(row[i + 1:], lab[i + 1:]):
                if li != lj:
                    diff = (si - sj) if li > lj else (sj - si)
                    total += max(0.0, margin - diff)
                    count += 1
    return torch.tensor(total / max(count, 1))


def run():
    torch.manual_seed(0)
    model = MFScorer()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    users = torch.randint(0, 30, (8,))
    items = torch.randint(0, 50, (8, 5))
    labels = (torch.rand(8, 5) > 0.6).long()
    scores = model(users, items)
    loss = pairwise_hinge(scores, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
