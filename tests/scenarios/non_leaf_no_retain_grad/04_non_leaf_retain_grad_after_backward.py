"""To inspect the gradient of the attention output, the user calls
attn_out.retain_grad() after loss.backward(). retain_grad only affects later
backward passes, so attn_out.grad is still None.
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "attn_out"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    head = nn.Linear(8, 1)
    x = torch.randn(2, 4, 8)
    attn_out, _ = mha(x, x, x)  # <-- CUT
    loss = head(attn_out).pow(2).mean()
    loss.backward()
    attn_out.retain_grad()
    return {"mha": mha, "attn_out": attn_out, "loss": loss}
