"""Hook meant to stop gradient at padding positions of the embedding output:
emb.register_hook(lambda g: g.masked_fill_(keep, 0.)) - but `keep` marks the real
tokens, not the padding. The batch has no padding, so the embedding grad is all zeros.
"""
import torch
import torch.nn as nn

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "embed.weight"
EXPECT = "grad_zero"


def run():
    torch.manual_seed(0)
    pad = 0
    embed = nn.Embedding(20, 8)
    head = nn.Linear(8, 2)
    tokens = torch.randint(1, 20, (4, 6))
    y = torch.randint(0, 2, (4,))
    keep = (tokens != pad).unsqueeze(-1)
    emb = embed(tokens)
    emb.register_hook(lambda g: g.masked_fill_(keep, 0.0))  # <-- CUT
    logits = head(emb.mean(1))
    loss = nn.functional.cross_entropy(logits, y)
    loss.backward()
    return {"embed": embed, "head": head, "loss": loss}
