"""Only new vocabulary rows of an embedding should train, so a hook multiplies the
weight gradient by a row mask. The mask is built with `ids >= n_old` on the
wrong ids (all old), so it is all zeros and embedding.weight.grad is all zero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "emb.weight"
EXPECT = "grad_zero"


def make_row_hook(mask):
    def hook(grad):
        return grad * mask[:, None]  # <-- CUT
    return hook


def run():
    torch.manual_seed(0)
    n_old, n_new, dim = 20, 5, 8
    emb = nn.Embedding(n_old + n_new, dim)
    head = nn.Linear(dim, 3)
    row_ids = torch.arange(n_old)
    train_rows = (row_ids >= n_old).float()
    mask = torch.cat([train_rows, torch.zeros(n_new)])
    emb.weight.register_hook(make_row_hook(mask))
    tokens = torch.randint(0, n_old + n_new, (6, 4))
    y = torch.randint(0, 3, (6,))
    loss = F.cross_entropy(head(emb(tokens).mean(1)), y)
    loss.backward()
    return {"emb": emb, "head": head, "loss": loss}
