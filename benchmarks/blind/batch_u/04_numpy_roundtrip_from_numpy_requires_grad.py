"""pytorch/pytorch#6597 (requires_grad flag for torch.from_numpy): a feature pipeline
whitens encoder features in numpy with a per-batch covariance and wraps the result
back with torch.from_numpy(...).requires_grad_(). backward() runs fine and the
whitened tensor even gets a .grad, but the encoder upstream of the numpy step does
not: encoder.proj.weight.grad is None."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "encoder.proj.weight"
EXPECT = "grad_none"


class Encoder(nn.Module):
    def __init__(self, d_in=12, d=6):
        super().__init__()
        self.proj = nn.Linear(d_in, d)

    def forward(self, x):
        return torch.tanh(self.proj(x))


class Whitener:
    def __init__(self, eps=1e-3):
        self.eps = eps

    def __call__(self, feats):
        f = feats.detach().cpu().numpy().astype(np.float64)  # <-- CUT
        f = f - f.mean(0, keepdims=True)
        cov = f.T @ f / f.shape[0] + self.eps * np.eye(f.shape[1])
        w, v = np.linalg.eigh(cov)
        white = f @ v @ np.diag(1.0 / np.sqrt(w)) @ v.T
        return torch.from_numpy(white.astype(np.float32)).requires_grad_()


def run():
    torch.manual_seed(0)
    encoder = Encoder()
    head = nn.Linear(6, 3)
    whiten = Whitener()
    opt = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
    x = torch.randn(32, 12)
    y = torch.randint(0, 3, (32,))
    z = whiten(encoder(x))
    loss = F.cross_entropy(head(z), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"encoder": encoder, "head": head, "z": z, "loss": loss}
