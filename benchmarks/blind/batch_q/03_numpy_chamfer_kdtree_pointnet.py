"""PointNet autoencoder for point clouds. The Chamfer term finds nearest neighbours
in numpy (a KD-tree style helper) and returns the distances via torch.from_numpy.
The T-net orthogonality regulariser keeps backward working, so only that trains;
the folding decoder never gets a gradient.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.decoder[0].weight"
EXPECT = "grad_none"


class TNet(nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.k = k
        self.mlp = nn.Sequential(nn.Linear(k, 16), nn.ReLU(), nn.Linear(16, k * k))

    def forward(self, pts):
        m = self.mlp(pts).max(dim=1).values.view(-1, self.k, self.k)
        return m + torch.eye(self.k)


class PointNetAE(nn.Module):
    def __init__(self, n_out=32):
        super().__init__()
        self.n_out = n_out
        self.tnet = TNet()
        self.shared = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 64))
        self.decoder = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, n_out * 3))

    def forward(self, pts):
        T = self.tnet(pts)
        feat = self.shared(torch.bmm(pts, T)).max(dim=1).values
        return self.decoder(feat).view(-1, self.n_out, 3), T


def nn_sq_dist(a, b):
    a_np = a.detach().cpu().numpy()  # <-- CUT
    b_np = b.detach().cpu().numpy()
    d = ((a_np[:, :, None, :] - b_np[:, None, :, :]) ** 2).sum(-1)
    return torch.from_numpy(d.min(2)).float(), torch.from_numpy(d.min(1)).float()


def chamfer(pred, gt):
    d1, d2 = nn_sq_dist(pred, gt)
    return d1.mean() + d2.mean()


def ortho_reg(T):
    I = torch.eye(T.size(1)).expand_as(T)
    return ((torch.bmm(T, T.transpose(1, 2)) - I) ** 2).sum(dim=(1, 2)).mean()


def run():
    torch.manual_seed(0)
    model = PointNetAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    pts = torch.randn(2, 32, 3)
    recon, T = model(pts)
    loss = chamfer(recon, pts) + 0.001 * ortho_reg(T)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
