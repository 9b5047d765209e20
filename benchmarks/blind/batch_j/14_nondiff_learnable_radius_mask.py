"""Embedding model with a learnable inlier radius: only embeddings whose norm is below the
threshold enter the compactness loss, selected with a boolean mask X[X.norm(dim=1) < threshold].
The encoder gets gradients through the selected rows, but the comparison is not differentiable
in the threshold, so threshold.grad stays None (the forum answer suggests a sigmoid soft mask).
Thread: discuss.pytorch.org/t/204381 (Optimize masking parameter).
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.radius.threshold"
EXPECT = "grad_none"


class RadiusFilter(nn.Module):
    def __init__(self, init=1.5):
        super().__init__()
        self.threshold = nn.Parameter(torch.tensor(init))

    def forward(self, X):
        inliers = X[X.norm(dim=1) < self.threshold]  # <-- CUT
        return inliers.norm(dim=1).mean()


class CompactEmbedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
        self.radius = RadiusFilter()

    def forward(self, x):
        X = self.encoder(x)
        return self.radius(X)


def run():
    torch.manual_seed(2024)
    model = CompactEmbedder()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(10, 5)
    loss = model(x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
