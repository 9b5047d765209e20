"""Point-cloud autoencoder with an auxiliary shape-class head. The Chamfer distance is computed by a
numpy helper (point-cloud-utils style k-nearest-neighbours only takes numpy arrays), so the
reconstruction is converted to numpy and the distance comes back as a fresh tensor. The encoder still
trains through the class loss and an eval metric runs under no_grad, but decoder[0].weight.grad is None.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.decoder[0].weight"
EXPECT = "grad_none"


def k_nearest_neighbors(query_points, dataset_points, k=1):
    d = ((query_points[:, None, :] - dataset_points[None, :, :]) ** 2).sum(-1)
    idx = np.argsort(d, axis=1)[:, :k]
    return np.take_along_axis(d, idx, axis=1), idx


def chamfer_distance(a, b):
    a_np = a.detach().cpu().numpy()  # <-- CUT
    b_np = b.detach().cpu().numpy()
    d_ab, _ = k_nearest_neighbors(a_np, b_np)
    d_ba, _ = k_nearest_neighbors(b_np, a_np)
    return torch.from_numpy(np.asarray(d_ab.mean() + d_ba.mean(), dtype=np.float32))


class PointAE(nn.Module):
    def __init__(self, n_points=32, latent=16, n_cls=4):
        super().__init__()
        self.n_points = n_points
        self.encoder = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, latent))
        self.decoder = nn.Sequential(nn.Linear(latent, 64), nn.ReLU(), nn.Linear(64, n_points * 3))
        self.cls_head = nn.Linear(latent, n_cls)

    def forward(self, pts):
        z = self.encoder(pts).max(1).values
        return self.decoder(z).view(-1, self.n_points, 3), self.cls_head(z)


def run():
    torch.manual_seed(0)
    model = PointAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    pts = torch.randn(3, 32, 3)
    labels = torch.tensor([0, 2, 3])
    recon, logits = model(pts)
    loss_cd = sum(chamfer_distance(recon[i], pts[i]) for i in range(len(pts))) / len(pts)
    loss_cls = F.cross_entropy(logits, labels)
    loss = loss_cd + 0.1 * loss_cls
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        val_cd = chamfer_distance(model(pts)[0][0], pts[0]).item()
    return {"model": model, "loss": loss, "val_cd": val_cd}
