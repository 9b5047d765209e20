"""A diversity loss counts distinct predicted cluster centres with torch.unique on
the (rounded) embeddings. unique has no derivative, so backward() raises
"the derivative for '_unique2' is not implemented".
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    enc = nn.Linear(5, 3)
    x = torch.randn(10, 5)
    z = enc(x)
    centres = torch.unique(z, dim=0)  # <-- CUT
    loss = -centres.var(dim=0).mean() + z.pow(2).mean()
    loss.backward()
    return {"enc": enc, "loss": loss}
