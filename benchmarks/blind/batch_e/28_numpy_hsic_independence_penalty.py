"""HSIC independence penalty taken from a numpy implementation (amber0309/HSIC#6):
the user adds the numpy HSIC statistic between the nuisance code and the label code
to the training objective, converting the tensors with .detach().cpu().numpy() and
the result back with torch.tensor. The author replies that the numpy code is not
differentiable; the nuisance projection, reached only through the penalty, gets no grad.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.proj_s.weight"
EXPECT = "grad_none"


def rbf_dot(X, Y, width):
    G = (X * X).sum(1).reshape(-1, 1)
    H = (Y * Y).sum(1).reshape(-1, 1)
    Q = np.tile(G, (1, Y.shape[0]))
    R = np.tile(H.T, (X.shape[0], 1))
    return np.exp(-(Q + R - 2 * X @ Y.T) / (2 * width ** 2))


def hsic_gam(X, Y):
    n = X.shape[0]
    H = np.eye(n) - np.ones((n, n)) / n
    K = rbf_dot(X, X, 1.0)
    L = rbf_dot(Y, Y, 1.0)
    return np.trace(K @ H @ L @ H) / (n - 1) ** 2


class DisentangledEncoder(nn.Module):
    def __init__(self, d_in=10, d_h=16, d_z=4, n_cls=3):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d_in, d_h), nn.ReLU())
        self.proj_y = nn.Linear(d_h, d_z)
        self.proj_s = nn.Linear(d_h, d_z)
        self.cls = nn.Linear(d_z, n_cls)

    def forward(self, x):
        h = self.trunk(x)
        z_y, z_s = self.proj_y(h), self.proj_s(h)
        return self.cls(z_y), z_y, z_s


def hsic_penalty(z_s, z_y):
    s_np = z_s.detach().cpu().numpy().astype(np.float64)  # <-- CUT
    y_np = z_y.detach().cpu().numpy().astype(np.float64)
    return torch.tensor(hsic_gam(s_np, y_np), dtype=torch.float32)


def run():
    torch.manual_seed(0)
    model = DisentangledEncoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(32, 10)
    y = torch.randint(0, 3, (32,))
    opt.zero_grad()
    logits, z_y, z_s = model(x)
    loss = F.cross_entropy(logits, y) + 0.5 * hsic_penalty(z_s, z_y)
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
