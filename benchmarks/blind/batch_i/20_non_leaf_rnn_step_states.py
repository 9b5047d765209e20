"""Char-RNN written with an explicit loop that keeps every hidden state in a
list, to plot how the gradient w.r.t. each time step decays. The states are
intermediate results and nobody called retain_grad(): hs[2].grad is None after
backward (the cell weights do get gradients).
Thread: SO "Why does autograd not produce gradient for intermediate variables?" (recalled).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "hs[2]"
EXPECT = "grad_none"


class CharRNN(nn.Module):
    def __init__(self, vocab=12, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.cell = nn.RNNCell(d, d)
        self.out = nn.Linear(d, vocab)

    def forward(self, chars):
        h = torch.zeros(chars.size(0), self.cell.hidden_size)
        hs, logits = [], []
        for t in range(chars.size(1)):
            h = self.cell(self.emb(chars[:, t]), h)  # <-- CUT
            hs.append(h)
            logits.append(self.out(h))
        return torch.stack(logits, 1), hs


def run():
    torch.manual_seed(0)
    model = CharRNN()
    chars = torch.randint(0, 12, (2, 6))
    nxt = torch.randint(0, 12, (2, 6))
    logits, hs = model(chars)
    loss = F.cross_entropy(logits.reshape(-1, 12), nxt.reshape(-1))
    loss.backward()
    grad_norms = [None if h.grad is None else h.grad.norm().item() for h in hs]
    return {"model": model, "hs": hs, "loss": loss, "grad_norms": grad_norms}
