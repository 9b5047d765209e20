"""Domain adaptation with an alignment term computed by a scikit-learn style
helper `pairwise_cosine(X, Y)`, which converts its inputs with
`.detach().cpu().numpy()` "like sklearn does" and is wrapped back with
torch.from_numpy. The classifier trains; the alignment projector gets no grad.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "align.weight"
EXPECT = "grad_none"


def pairwise_cosine(X, Y):
    X, Y = X.detach().cpu().numpy(), Y.detach().cpu().numpy()  # <-- CUT
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    Yn = Y / np.linalg.norm(Y, axis=1, keepdims=True)
    return Xn @ Yn.T


def run():
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
    cls = nn.Linear(32, 4)
    align = nn.Linear(32, 16)
    params = [*backbone.parameters(), *cls.parameters(), *align.parameters()]
    opt = torch.optim.SGD(params, lr=0.05)
    xs, ys = torch.randn(8, 10), torch.randint(0, 4, (8,))
    xt = torch.randn(8, 10) + 0.5
    fs, ft = backbone(xs), backbone(xt)
    sim = torch.from_numpy(pairwise_cosine(align(fs), align(ft)))
    align_loss = (1.0 - sim.diagonal()).mean()
    loss = F.cross_entropy(cls(fs), ys) + 0.1 * align_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"backbone": backbone, "cls": cls, "align": align, "opt": opt, "loss": loss}
