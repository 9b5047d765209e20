"""Greedy seq2seq decoder with nn.Embedding(max_norm=1.0) whose weight is tied to
the output projection (logits = h @ emb.weight.t()). Each later step embeds the
next token, and the max_norm renorm rewrites emb.weight in place, which the
earlier projection saved for backward: loss.backward() raises the in-place error.
Thread: SO, nn.Embedding max_norm with tied weights (pattern; thread not located).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class TiedDecoder(nn.Module):
    def __init__(self, vocab=20, d=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, max_norm=1.0)
        self.cell = nn.GRUCell(d, d)

    def forward(self, bos, h, steps):
        tok = bos
        all_logits = []
        for _ in range(steps):
            x = self.emb(tok)  # <-- CUT
            h = self.cell(x, h)
            logits = h @ self.emb.weight.t()
            all_logits.append(logits)
            tok = logits.argmax(-1)
        return torch.stack(all_logits, 1)


def run():
    torch.manual_seed(0)
    model = TiedDecoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    bos = torch.zeros(3, dtype=torch.long)
    h0 = torch.randn(3, 8)
    target = torch.randint(0, 20, (3, 4))
    logits = model(bos, h0, steps=4)
    loss = F.cross_entropy(logits.reshape(-1, 20), target.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
