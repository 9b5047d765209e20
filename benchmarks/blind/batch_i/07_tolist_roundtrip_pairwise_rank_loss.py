"""Learning-to-rank model: the pairwise hinge loss is computed in a Python double
loop over scores.tolist() (the user found indexing tensors element by element
slow), and rebuilt with torch.tensor(losses, requires_grad=True).mean(). backward
runs; the scorer never gets a gradient: scorer.fc.weight.grad is None.
Thread: SO, ranking loss built from .tolist() values (pattern; thread not located).
"""
import torch
import torch.nn as nn

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "scorer.fc.weight"
EXPECT = "grad_none"


class Scorer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, 1)

    def forward(self, feats):
        return self.fc(feats).squeeze(-1)


def pairwise_hinge(scores, relevance, margin=1.0):
    s = scores.tolist()  # <-- CUT
    r = relevance.tolist()
    losses = []
    for i in range(len(s)):
        for j in range(len(s)):
            if r[i] > r[j]:
                losses.append(max(0.0, margin - (s[i] - s[j])))
    return torch.tensor(losses, requires_grad=True).mean()


class RankTrainer:
    def __init__(self, d=7):
        self.scorer = Scorer(d)
        self.opt = torch.optim.SGD(self.scorer.parameters(), lr=0.1)

    def step(self, query_docs, relevance):
        loss = pairwise_hinge(self.scorer(query_docs), relevance)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    trainer = RankTrainer()
    docs = torch.randn(6, 7)
    rel = torch.tensor([3, 2, 2, 1, 0, 0])
    loss = trainer.step(docs, rel)
    return {"trainer": trainer, "scorer": trainer.scorer, "loss": loss}
