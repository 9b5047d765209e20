"""A pointer network zeroes invalid positions after the softmax with a boolean
index assignment probs[~valid] = 0 and renormalises. softmax saved its
output for backward, so loss.backward() raises the in-place error.
"""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    query = nn.Linear(8, 8)
    keys = torch.randn(2, 6, 8)
    q = query(torch.randn(2, 8))
    scores = torch.einsum("bd,bnd->bn", q, keys)
    valid = torch.tensor([[True] * 4 + [False] * 2, [True] * 6])
    probs = torch.softmax(scores, dim=-1)
    probs[~valid] = 0.0  # <-- CUT
    probs = probs / probs.sum(-1, keepdim=True)
    target = torch.tensor([1, 3])
    loss = -torch.log(probs[torch.arange(2), target] + 1e-9).mean()
    loss.backward()
    return {"query": query, "loss": loss}
