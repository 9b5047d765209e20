"""Attention pooling over padded sequences. The user asked why masking uses -inf and not 0
and "simplified" it: attention weights go to Python lists, padded positions are zeroed
and rows renormalised in a loop, then torch.tensor rebuilds them. The pooled output still
trains the value projection, but the score projection gets no gradient.
Thread: discuss.pytorch.org/t/masking-in-transformer-decoders-with-inf-rather-than-0s/68154
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.pool.score.weight"
EXPECT = "grad_none"


class AttnPool(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.score = nn.Linear(d, 1)
        self.value = nn.Linear(d, d)

    def forward(self, h, lengths):
        w = F.softmax(self.score(h).squeeze(-1), dim=-1)
        rows = w.tolist()  # <-- CUT
        for r, n in zip(rows, lengths):
            for j in range(n, len(r)):
                r[j] = 0.0
            s = sum(r)
            r[:] = [v / s for v in r]
        w = torch.tensor(rows)
        return (w.unsqueeze(-1) * self.value(h)).sum(1)


class Classifier(nn.Module):
    def __init__(self, vocab=40, d=16, n_cls=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d, padding_idx=0)
        self.pool = AttnPool(d)
        self.out = nn.Linear(d, n_cls)

    def forward(self, tok, lengths):
        return self.out(self.pool(self.embed(tok), lengths))


def run():
    torch.manual_seed(0)
    model = Classifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tok = torch.randint(1, 40, (3, 6))
    lengths = [6, 4, 2]
    for i, n in enumerate(lengths):
        tok[i, n:] = 0
    y = torch.tensor([0, 2, 1])
    loss = F.cross_entropy(model(tok, lengths), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
