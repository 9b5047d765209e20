"""SIGN-style graph model: multi-hop propagated features A^k X W_in are cached once per
epoch under torch.inference_mode() for speed, then cloned (as the error message suggests) and
fed to the trainable classifier. The classifier trains; the input projection model.inp.weight gets no grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.inp.weight"
EXPECT = "grad_none"


def sym_norm(A):
    A = A + torch.eye(A.size(0))
    d = A.sum(1).rsqrt()
    return d[:, None] * A * d[None, :]


class SIGN(nn.Module):
    def __init__(self, d_in, d_hid, n_cls, hops=2):
        super().__init__()
        self.hops = hops
        self.inp = nn.Linear(d_in, d_hid)
        self.cls = nn.Sequential(nn.Linear(d_hid * (hops + 1), d_hid), nn.ReLU(), nn.Linear(d_hid, n_cls))
        self.cache = None

    def precompute(self, A_hat, X):
        with torch.inference_mode():
            h = self.inp(X)
            feats = [h]
            for _ in range(self.hops):
                h = A_hat @ h
                feats.append(h)
            self.cache = torch.cat(feats, dim=1)  # <-- CUT

    def forward(self, idx):
        return self.cls(self.cache.clone()[idx])


def run():
    torch.manual_seed(0)
    n = 20
    A = (torch.rand(n, n) < 0.2).float()
    A = ((A + A.t()) > 0).float().fill_diagonal_(0)
    X, y = torch.randn(n, 8), torch.randint(0, 3, (n,))
    model = SIGN(8, 16, 3)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.precompute(sym_norm(A), X)
    train_idx = torch.arange(0, 14)
    loss = F.cross_entropy(model(train_idx), y[train_idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
