"""Reduction written into a preallocated buffer (pytorch/pytorch#74874): inputs are
copied into tensor[0], tensor[1], tensor[3], partial results are written back with
tensor[2] = op(tensor[0], tensor[1]) etc. It works for torch.add, but with
torch.mul the later slice writes modify tensors mul saved, and backward raises.
"""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def reduce(x, y, z, op):
    tensor = torch.zeros((5,), dtype=torch.float32, requires_grad=False)
    tensor[0] = x
    tensor[1] = y
    tensor[3] = z
    tensor[2] = op(tensor[0], tensor[1])  # <-- CUT
    tensor[4] = op(tensor[2], tensor[3])
    return tensor[4]


class GatedProduct(nn.Module):
    """Multiplicative interaction of three scalar gates."""

    def __init__(self):
        super().__init__()
        self.gates = nn.Linear(6, 3)

    def forward(self, feats):
        g = torch.sigmoid(self.gates(feats))
        return reduce(g[0:1], g[1:2], g[2:3], op=torch.mul)


def run():
    torch.manual_seed(0)
    model = GatedProduct()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    out = model(torch.randn(6))
    loss = (out - 0.5).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
