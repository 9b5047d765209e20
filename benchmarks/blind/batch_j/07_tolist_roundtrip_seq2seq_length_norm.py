"""Seq2seq summarizer whose loss is length-normalised per sentence. The user computed per-token
NLL, moved the per-sentence sums to Python with .tolist() to divide by each length, and rebuilt
the batch loss with torch.tensor(..., requires_grad=True) because backward had complained.
Backward now runs on a fresh leaf, and no model parameter gets a gradient.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.out.weight"
EXPECT = "grad_none"

PAD = 0


class Seq2Seq(nn.Module):
    def __init__(self, vocab=20, hidden=24):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden, padding_idx=PAD)
        self.encoder = nn.GRU(hidden, hidden, batch_first=True)
        self.decoder = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, src, tgt_in):
        _, h = self.encoder(self.embed(src))
        dec, _ = self.decoder(self.embed(tgt_in), h)
        return self.out(dec)


def length_normalised_nll(logits, tgt_out):
    nll = F.cross_entropy(logits.transpose(1, 2), tgt_out, ignore_index=PAD, reduction="none")
    lengths = (tgt_out != PAD).sum(1).tolist()
    sentence_sums = nll.sum(1).tolist()  # <-- CUT
    per_sentence = [s / max(n, 1) for s, n in zip(sentence_sums, lengths)]
    return torch.tensor(sum(per_sentence) / len(per_sentence), requires_grad=True)


def run():
    torch.manual_seed(0)
    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    src = torch.randint(1, 20, (3, 7))
    tgt = torch.randint(1, 20, (3, 6))
    tgt[0, 4:] = PAD
    tgt[2, 3:] = PAD
    logits = model(src, tgt[:, :-1])
    loss = length_normalised_nll(logits, tgt[:, 1:])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
