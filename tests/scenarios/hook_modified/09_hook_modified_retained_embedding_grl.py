"""Integrated-gradients style probe of token embeddings: emb.retain_grad() is
called, but a gradient-reversal hook copied from a domain-adaptation model is
registered on emb with lambda_ = 0.0 at the start of the schedule, so the
hook returns zeros and emb.grad is an all-zero tensor.
"""
import torch
import torch.nn as nn

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "emb"
EXPECT = "grad_zero"


def grl_hook(lambda_):
    def hook(g):
        return -lambda_ * g  # <-- CUT
    return hook


def run():
    torch.manual_seed(0)
    embed = nn.Embedding(30, 8)
    clf = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    tokens = torch.randint(0, 30, (2, 5))
    emb = embed(tokens)
    emb.retain_grad()
    emb.register_hook(grl_hook(0.0))
    logits = clf(emb.mean(1))
    logits[:, 1].sum().backward()
    return {"embed": embed, "clf": clf, "emb": emb}
