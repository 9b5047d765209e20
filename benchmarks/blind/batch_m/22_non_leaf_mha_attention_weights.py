"""Attention attribution: the user wants the gradient of the loss with respect to
the attention map of a transformer classifier, so the block keeps the weights
returned by nn.MultiheadAttention in `self.last_attn`. After backward,
`model.block.last_attn.grad` is None: it is a non-leaf without retain_grad().
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.block.last_attn"
EXPECT = "grad_none"


class AttnBlock(nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.mha = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 64), nn.GELU(), nn.Linear(64, d))
        self.last_attn = None

    def forward(self, x):
        out, attn = self.mha(x, x, x, need_weights=True, average_attn_weights=True)  # <-- CUT
        self.last_attn = attn
        x = self.norm(x + out)
        return x + self.ff(x)


class Classifier(nn.Module):
    def __init__(self, vocab=50, d=32, n_cls=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.block = AttnBlock(d)
        self.head = nn.Linear(d, n_cls)

    def forward(self, ids):
        return self.head(self.block(self.embed(ids)).mean(1))


def run():
    torch.manual_seed(0)
    model = Classifier()
    ids, y = torch.randint(0, 50, (2, 7)), torch.tensor([0, 1])
    loss = F.cross_entropy(model(ids), y)
    loss.backward()
    relevance = None
    if model.block.last_attn.grad is not None:
        relevance = (model.block.last_attn * model.block.last_attn.grad).sum(1)
    return {"model": model, "loss": loss, "relevance": relevance}
