"""Minimum-risk training for a seq2seq model: sequence log-probs of the beam
hypotheses are moved to Python with `.tolist()` to sort and renormalise them next
to the BLEU-like rewards, then rebuilt with torch.tensor(..., requires_grad=True).
backward runs, but the decoder never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.dec.weight_ih"
EXPECT = "grad_none"


class TinyS2S(nn.Module):
    def __init__(self, vocab=12, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.enc = nn.GRU(d, d, batch_first=True)
        self.dec = nn.GRUCell(d, d)
        self.out = nn.Linear(d, vocab)

    def score(self, src, hyp):
        _, h = self.enc(self.emb(src))
        h = h[0].expand(hyp.size(0), -1)
        lp = 0.0
        prev = torch.zeros(hyp.size(0), dtype=torch.long)
        for t in range(hyp.size(1)):
            h = self.dec(self.emb(prev), h)
            lp = lp + F.log_softmax(self.out(h), -1).gather(1, hyp[:, t:t + 1]).squeeze(1)
            prev = hyp[:, t]
        return lp


def overlap_reward(hyp, ref):
    return [len(set(h) & set(ref)) / len(ref) for h in hyp]


def mrt_loss(seq_logp, rewards, alpha=0.5):
    scores = (seq_logp * alpha).tolist()  # <-- CUT
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    q = torch.tensor([scores[i] for i in order], requires_grad=True).softmax(0)
    r = torch.tensor([rewards[i] for i in order])
    return -(q * r).sum()


def run():
    torch.manual_seed(0)
    model = TinyS2S()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    src = torch.randint(1, 12, (1, 5))
    beam = torch.randint(1, 12, (4, 6))
    ref = [3, 5, 7, 2, 9, 1]
    loss = mrt_loss(model.score(src, beam), overlap_reward(beam.tolist(), ref))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
