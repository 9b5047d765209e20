"""Control: F.gumbel_softmax(logits, hard=True) returns one-hot samples with the
straight-through trick (it uses argmax internally), so the policy logits
still receive a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    policy = nn.Linear(5, 4)
    values = nn.Parameter(torch.randn(4, 3))
    s = torch.randn(6, 5)
    onehot = F.gumbel_softmax(policy(s), tau=0.5, hard=True)
    out = onehot @ values
    loss = (out - 1.0).pow(2).mean()  # <-- CUT
    loss.backward()
    return {"policy": policy, "values": values, "loss": loss}
