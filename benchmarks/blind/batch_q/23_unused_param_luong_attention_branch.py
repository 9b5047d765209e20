"""Seq2seq decoder with a configurable attention type. The config says
"Luong-general" while the decoder checks `self.attn_type == "general"`, so the
early `return` without attention is taken at every step. The GRU and output
layer train; the attention projection gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "dec.attn_W.weight"
EXPECT = "grad_none"

CFG = {"attention": "Luong-general", "d": 16, "vocab": 15}


class AttnDecoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, V = cfg["d"], cfg["vocab"]
        self.attn_type = cfg["attention"].lower()
        self.emb = nn.Embedding(V, d)
        self.gru = nn.GRUCell(d, d)
        self.attn_W = nn.Linear(d, d, bias=False)
        self.concat = nn.Linear(2 * d, d)
        self.out = nn.Linear(d, V)

    def step(self, tok, h, enc_out):
        h = self.gru(self.emb(tok), h)
        if self.attn_type != "general":
            return self.out(h), h  # <-- CUT
        scores = torch.bmm(enc_out, self.attn_W(h).unsqueeze(2)).squeeze(2)
        ctx = torch.bmm(scores.softmax(-1).unsqueeze(1), enc_out).squeeze(1)
        return self.out(torch.tanh(self.concat(torch.cat([h, ctx], -1)))), h


def run():
    torch.manual_seed(0)
    enc = nn.GRU(CFG["d"], CFG["d"], batch_first=True)
    src_emb = nn.Embedding(CFG["vocab"], CFG["d"])
    dec = AttnDecoder(CFG)
    params = list(enc.parameters()) + list(src_emb.parameters()) + list(dec.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)
    src = torch.randint(0, 15, (2, 6))
    tgt = torch.randint(0, 15, (2, 5))
    enc_out, h = enc(src_emb(src))
    h = h[0]
    loss = 0.0
    for t in range(tgt.size(1) - 1):
        logits, h = dec.step(tgt[:, t], h, enc_out)
        loss = loss + F.cross_entropy(logits, tgt[:, t + 1])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"dec": dec, "loss": loss}
