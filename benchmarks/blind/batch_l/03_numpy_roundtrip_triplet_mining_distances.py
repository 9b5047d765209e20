"""Metric learning with batch-hard triplet mining. The miner computes the distance
matrix in numpy (to use np.argsort), and the user then builds the triplet loss from
torch.from_numpy of those numpy distances, not only from the mined indices. A softmax
classification loss on the backbone keeps backward working; the projection head used
only by the triplet term gets no gradient.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.proj.weight"
EXPECT = "grad_none"


class EmbedNet(nn.Module):
    def __init__(self, d_in=20, d_emb=8, n_cls=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU())
        self.proj = nn.Linear(32, d_emb)
        self.cls = nn.Linear(32, n_cls)

    def forward(self, x):
        h = self.backbone(x)
        return F.normalize(self.proj(h), dim=-1), self.cls(h)


class BatchHardMiner:
    def __init__(self, margin):
        self.margin = margin

    def __call__(self, emb, labels):
        e = emb.detach().cpu().numpy()  # <-- CUT
        lab = labels.numpy()
        dist = np.sqrt(((e[:, None, :] - e[None, :, :]) ** 2).sum(-1) + 1e-12)
        same = lab[:, None] == lab[None, :]
        hardest_pos = np.where(same, dist, -np.inf).max(1)
        hardest_neg = np.where(~same, dist, np.inf).min(1)
        d_ap = torch.from_numpy(hardest_pos).float()
        d_an = torch.from_numpy(hardest_neg).float()
        return F.relu(d_ap - d_an + self.margin).mean()


def run():
    torch.manual_seed(0)
    model = EmbedNet()
    miner = BatchHardMiner(margin=0.3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(16, 20)
    labels = torch.arange(4).repeat_interleave(4)
    emb, logits = model(x)
    triplet = miner(emb, labels)
    ce = F.cross_entropy(logits, labels)
    loss = ce + 1.0 * triplet
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "triplet": triplet, "ce": ce}
