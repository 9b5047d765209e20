"""Reproduces pytorch/pytorch#92586: a preprocessing helper returns `t.detach()` and then
sets `requires_grad = True` on the copy, so backward() no longer raises. The loss trains
only the fresh copy; the user's original leaf `t` (a learnable offset) keeps .grad None.
"""
import torch

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "offset"
EXPECT = "grad_none"


def prepare(t, scale):
    t_copy = t.detach() * scale  # <-- CUT
    t_copy.requires_grad = True
    return t_copy


def run():
    torch.manual_seed(0)
    offset = torch.randn(5, requires_grad=True)
    gain = torch.ones(5, requires_grad=True)
    signal = torch.randn(8, 5)
    target = torch.randn(8, 5)
    opt = torch.optim.SGD([offset, gain], lr=0.05)

    shifted = prepare(offset, 2.0)
    pred = signal * gain + shifted
    loss = ((pred - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"offset": offset, "gain": gain, "shifted": shifted, "loss": loss}
