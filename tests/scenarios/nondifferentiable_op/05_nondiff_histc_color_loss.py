"""A color-transfer network matches the histogram of its output to a reference
with torch.histc. histc has no gradient, so the histogram loss has no grad_fn
and loss.backward() raises.
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 3, 1), nn.Sigmoid())
    img = torch.rand(1, 3, 8, 8)
    ref = torch.rand(1, 3, 8, 8)
    out = net(img)
    h_out = torch.histc(out, bins=16, min=0.0, max=1.0)  # <-- CUT
    h_ref = torch.histc(ref, bins=16, min=0.0, max=1.0)
    loss = (h_out / h_out.sum() - h_ref / h_ref.sum()).abs().sum()
    loss.backward()
    return {"net": net, "loss": loss}
