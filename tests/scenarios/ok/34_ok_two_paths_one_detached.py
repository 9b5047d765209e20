"""Control: the encoder output feeds the classifier directly and also a reconstruction
branch through `z.detach()` (the decoder is trained as a probe). One path is cut, the
other is not, so the encoder weight still receives a nonzero gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "enc.weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    enc, cls, dec = nn.Linear(8, 4), nn.Linear(4, 3), nn.Linear(4, 8)
    params = list(enc.parameters()) + list(cls.parameters()) + list(dec.parameters())
    opt = torch.optim.SGD(params, lr=0.1)
    x, y = torch.randn(6, 8), torch.randint(0, 3, (6,))
    z = torch.tanh(enc(x))
    probe_loss = F.mse_loss(dec(z.detach()), x)
    loss = F.cross_entropy(cls(z), y) + probe_loss  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"enc": enc, "dec": dec, "loss": loss}
