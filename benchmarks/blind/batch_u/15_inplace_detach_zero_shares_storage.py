"""pytorch/pytorch#6990 ("Differences between .data and .detach"): a gating module
computes out = sigmoid(a) and, to build a sparse mask for logging, takes
c = out.detach() and zeroes the small entries in place. detach() shares storage, so
sigmoid's saved output is modified and backward raises "one of the variables needed
for gradient computation has been modified by an inplace operation"."""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SoftGate(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.logits = nn.Linear(d, d)
        self.masks = []

    def forward(self, x):
        out = torch.sigmoid(self.logits(x))
        c = out.detach()
        c[c < 0.5] = 0.0  # <-- CUT
        self.masks.append(c)
        return x * out


def run():
    torch.manual_seed(0)
    gate = SoftGate()
    opt = torch.optim.Adam(gate.parameters(), lr=1e-3)
    x = torch.randn(5, 6)
    loss = gate(x).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"gate": gate, "loss": loss}
