"""A language model ties its output projection to an nn.Embedding created with
max_norm=1.0. The logits use emb.weight first; the later embedding lookup
renormalises the weight rows in place, and backward raises the in-place error.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class TiedLM(nn.Module):
    def __init__(self, vocab=20, d=6):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, max_norm=1.0)
        self.rnn = nn.GRU(d, d, batch_first=True)
        self.ctx = nn.Linear(d, d)

    def forward(self, ids, prev_state):
        logits_prev = self.ctx(prev_state) @ self.emb.weight.t()
        h, _ = self.rnn(self.emb(ids))  # <-- CUT
        return logits_prev, h @ self.emb.weight.t()


def run():
    torch.manual_seed(0)
    model = TiedLM()
    with torch.no_grad():
        model.emb.weight.mul_(3.0)
    ids = torch.randint(0, 20, (2, 5))
    prev_state = torch.randn(2, 6)
    logits_prev, logits = model(ids, prev_state)
    loss = F.cross_entropy(logits.reshape(-1, 20), ids.reshape(-1)) + logits_prev.logsumexp(-1).mean()
    loss.backward()
    return {"model": model, "loss": loss}
