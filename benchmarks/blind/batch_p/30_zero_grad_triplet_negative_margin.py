"""Triplet-loss embedding network. The config stores margin = -0.2 (the sign
convention of another library), so relu(d_ap - d_an + margin) is inactive for
every triplet in the batch: the loss is 0 and the embedding weights get an
all-zero gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net.fc1.weight"
EXPECT = "grad_zero"

CFG = {"margin": -0.2, "emb_dim": 8, "lr": 1e-3}


class EmbeddingNet(nn.Module):
    def __init__(self, d_in=16, d=8):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d_in, 32), nn.Linear(32, d)

    def forward(self, x):
        return F.normalize(self.fc2(F.relu(self.fc1(x))), dim=-1)


def batch_hard_triplets(emb, labels):
    d = torch.cdist(emb, emb)
    same = labels[:, None] == labels[None, :]
    d_ap = (d * same.float()).max(1).values
    d_an = (d + same.float() * 10.0).min(1).values
    return d_ap, d_an


def run():
    torch.manual_seed(0)
    net = EmbeddingNet(d=CFG["emb_dim"])
    opt = torch.optim.Adam(net.parameters(), lr=CFG["lr"])
    centers = torch.randn(4, 16) * 3
    labels = torch.arange(4).repeat_interleave(4)
    x = centers[labels] + 0.05 * torch.randn(16, 16)
    emb = net(x)
    d_ap, d_an = batch_hard_triplets(emb, labels)
    loss = F.relu(d_ap - d_an + CFG["margin"]).mean()  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"net": net, "loss": loss, "d_ap": d_ap, "d_an": d_an}
