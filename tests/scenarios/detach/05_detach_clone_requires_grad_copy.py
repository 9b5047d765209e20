"""Following the torch.tensor() warning's advice, the attention weights are copied
with attn.clone().detach().requires_grad_(True) before being applied. The
copy is a new leaf: the query projection upstream gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "attn.q.weight"
EXPECT = "grad_none"


class Attn(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.v = nn.Linear(d, d)

    def forward(self, x):
        w = torch.softmax(self.q(x) @ x.transpose(1, 2) / 8 ** 0.5, dim=-1)
        w = w.clone().detach().requires_grad_(True)  # <-- CUT
        return w @ self.v(x)


def run():
    torch.manual_seed(0)
    attn = Attn()
    x = torch.randn(2, 5, 8)
    loss = F.mse_loss(attn(x), x)
    loss.backward()
    return {"attn": attn, "loss": loss}
