"""Contrastive loss on a pairwise Euclidean distance matrix. The diagonal (and any
duplicate embedding) has squared distance 0, so the user guards it with
torch.where(d2 > 0, d2.sqrt(), 0). The forward is finite, but SqrtBackward0 still runs
on the masked zeros (inf * 0 = nan), and anomaly mode raises in backward.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Embedder(nn.Module):
    def __init__(self, d_in=12, d_emb=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU(), nn.Linear(32, d_emb))

    def forward(self, x):
        return self.net(x)


def pairwise_distances(emb):
    d2 = (emb.unsqueeze(1) - emb.unsqueeze(0)).pow(2).sum(-1)
    return torch.where(d2 > 0, d2.sqrt(), torch.zeros_like(d2))  # <-- CUT


def contrastive_loss(emb, labels, margin=1.0):
    d = pairwise_distances(emb)
    same = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
    pos = same * d.pow(2)
    neg = (1 - same) * F.relu(margin - d).pow(2)
    return (pos + neg).mean()


def run():
    torch.manual_seed(0)
    model = Embedder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(10, 12)
    labels = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3, 4, 4])
    with torch.autograd.detect_anomaly():
        loss = contrastive_loss(model(x), labels)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
