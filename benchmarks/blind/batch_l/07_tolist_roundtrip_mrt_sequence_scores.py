"""Seq2seq minimum-risk training. Sampled hypotheses are scored by summing their token
log-probs, and the sum is done on .tolist() rows in Python so a length penalty and
BLEU-like costs can be mixed in a loop. The risk is re-wrapped with
torch.tensor(..., requires_grad=True), so backward runs but no decoder weight is reached.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.out.weight"
EXPECT = "grad_none"


class Seq2Seq(nn.Module):
    def __init__(self, vocab=20, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.enc = nn.GRU(d, d, batch_first=True)
        self.dec = nn.GRU(d, d, batch_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, src, tgt_in):
        _, h = self.enc(self.emb(src))
        o, _ = self.dec(self.emb(tgt_in), h)
        return F.log_softmax(self.out(o), dim=-1)


def sequence_risk(logp, hyps, costs, alpha=0.7):
    tok_lp = logp.gather(-1, hyps.unsqueeze(-1)).squeeze(-1)
    scores = []
    for row, cost in zip(tok_lp.tolist(), costs.tolist()):  # <-- CUT
        length_pen = ((5 + len(row)) / 6) ** alpha
        scores.append((sum(row) / length_pen, cost))
    z = sum(torch.exp(torch.tensor(s)).item() for s, _ in scores)
    risk = sum(torch.exp(torch.tensor(s)).item() / z * c for s, c in scores)
    return torch.tensor(risk, requires_grad=True)


def run():
    torch.manual_seed(0)
    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)
    src = torch.randint(0, 20, (4, 7))
    hyps = torch.randint(0, 20, (4, 6))
    bos = torch.zeros(4, 1, dtype=torch.long)
    tgt_in = torch.cat([bos, hyps[:, :-1]], dim=1)
    costs = torch.rand(4)
    logp = model(src, tgt_in)
    loss = sequence_risk(logp, hyps, costs)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
