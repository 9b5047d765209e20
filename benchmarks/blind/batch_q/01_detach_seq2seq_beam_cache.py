"""Seq2seq with Bahdanau attention: the encoder outputs are cached for beam search
with `.detach()` ("no graph needed at decode time"), and the same cache is read by
the teacher-forced training step. The decoder and attention train; the encoder
embedding never receives a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder.embed.weight"
EXPECT = "grad_none"


class Encoder(nn.Module):
    def __init__(self, vocab, d):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.rnn = nn.GRU(d, d, batch_first=True)

    def forward(self, src):
        out, _ = self.rnn(self.embed(src))
        return out


class BahdanauAttention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.W_q = nn.Linear(d, d, bias=False)
        self.W_k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, 1, bias=False)

    def forward(self, h, keys):
        e = self.v(torch.tanh(self.W_q(h).unsqueeze(1) + self.W_k(keys))).squeeze(-1)
        a = F.softmax(e, dim=-1)
        return torch.bmm(a.unsqueeze(1), keys).squeeze(1)


class Seq2Seq(nn.Module):
    def __init__(self, vocab=20, d=16):
        super().__init__()
        self.encoder = Encoder(vocab, d)
        self.tgt_embed = nn.Embedding(vocab, d)
        self.attn = BahdanauAttention(d)
        self.cell = nn.GRUCell(2 * d, d)
        self.out = nn.Linear(2 * d, vocab)
        self.memory = None

    def encode(self, src):
        enc = self.encoder(src)
        self.memory = enc.detach()  # <-- CUT
        return self.memory

    def forward(self, src, tgt_in):
        keys = self.encode(src)
        h = torch.zeros(src.size(0), keys.size(-1))
        logits = []
        for t in range(tgt_in.size(1)):
            ctx = self.attn(h, keys)
            h = self.cell(torch.cat([self.tgt_embed(tgt_in[:, t]), ctx], -1), h)
            logits.append(self.out(torch.cat([h, ctx], -1)))
        return torch.stack(logits, 1)


def run():
    torch.manual_seed(0)
    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    src = torch.randint(1, 20, (3, 6))
    tgt = torch.randint(1, 20, (3, 5))
    logits = model(src, tgt[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 20), tgt[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
