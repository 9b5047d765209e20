"""Body-pressure estimation: the refiner (Mod2) predicts mesh vertices and a
pressure-map reconstruction (PMR) rasterises them onto the taxel grid. To sort
vertices with torch.unique the coordinates (z scaled by 1000) are converted to
int, so the pressure loss cannot reach the refiner; only the joint loss trains
Mod1 (Healthcare-Robotics/BodyPressure#15).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.mod2.refine.weight"
EXPECT = "grad_none"

ROWS, COLS = 8, 6


def pressure_map_reconstruction(verts):
    """verts: (B, V, 3) in taxel units; returns a (B, ROWS, COLS) depth/pressure map."""
    maps = []
    for v in verts:
        verts_taxel = torch.stack([v[:, 0], v[:, 1], v[:, 2] * 1000.0], dim=1)
        verts_taxel_int = verts_taxel.long()  # <-- CUT
        x = verts_taxel_int[:, 0].clamp(0, COLS - 1)
        y = verts_taxel_int[:, 1].clamp(0, ROWS - 1)
        cell = y * COLS + x
        uniq, inverse = torch.unique(cell, return_inverse=True)
        depth = torch.zeros(ROWS * COLS, dtype=torch.long).scatter_reduce(
            0, cell, verts_taxel_int[:, 2], reduce="amax", include_self=False)
        maps.append(depth.float().view(ROWS, COLS) / 1000.0)
    return torch.stack(maps)


class Mod1(nn.Module):
    def __init__(self, n_verts=12, n_joints=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Flatten(), nn.Linear(ROWS * COLS, 32), nn.ReLU())
        self.joints = nn.Linear(32, n_joints * 3)
        self.verts = nn.Linear(32, n_verts * 3)

    def forward(self, pmap):
        h = self.enc(pmap)
        return self.joints(h), self.verts(h)


class Mod2(nn.Module):
    def __init__(self, n_verts=12):
        super().__init__()
        self.refine = nn.Linear(n_verts * 3, n_verts * 3)
        self.n_verts = n_verts

    def forward(self, verts_flat):
        v = (verts_flat + self.refine(verts_flat)).view(-1, self.n_verts, 3)
        scale = torch.tensor([COLS, ROWS, 0.2])
        return torch.sigmoid(v) * scale


class BPWNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.mod1 = Mod1()
        self.mod2 = Mod2()

    def forward(self, pmap):
        joints, verts = self.mod1(pmap)
        verts2 = self.mod2(verts.detach())  # Mod2 is trained from the pressure loss only
        return joints, pressure_map_reconstruction(verts2)


def run():
    torch.manual_seed(0)
    model = BPWNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    pmap = torch.rand(2, ROWS, COLS)
    gt_joints = torch.randn(2, 12)
    joints, pmap_recon = model(pmap)
    loss = F.mse_loss(joints, gt_joints) + F.mse_loss(pmap_recon, pmap * 0.2)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
