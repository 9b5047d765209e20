"""Deep-clustering model: an assignment head scores the clusters, the hard
assignment is taken with argmax and used to pick the centroid that the encoder
output is pulled towards. The encoder and the centroids get gradients through
the distance; the assignment head only feeds argmax: model.assign.weight.grad is None.
Thread: SO "How does pytorch backprop through argmax?".
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.assign.weight"
EXPECT = "grad_none"


class DeepCluster(nn.Module):
    def __init__(self, d_in=10, d_z=4, k=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, 16), nn.ReLU(), nn.Linear(16, d_z))
        self.assign = nn.Linear(d_z, k)
        self.centroids = nn.Parameter(torch.randn(k, d_z))

    def forward(self, x):
        z = self.encoder(x)
        idx = self.assign(z).argmax(dim=1)  # <-- CUT
        return z, self.centroids[idx]


def cluster_loss(z, c):
    return (z - c).pow(2).sum(1).mean()


def run():
    torch.manual_seed(0)
    model = DeepCluster()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(24, 10)
    z, c = model(x)
    loss = cluster_loss(z, c)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
