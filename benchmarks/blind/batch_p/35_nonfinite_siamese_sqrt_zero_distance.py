"""Siamese contrastive training where the euclidean distance is written by hand as
sqrt(sum((e1 - e2)**2)). Positive pairs built from the same image without
augmentation give distance exactly 0, sqrt's derivative there is inf, and the
encoder's gradient fills with NaN.
"""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net.cnn[0].weight"
EXPECT = "grad_nonfinite"


class SiameseCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.cnn = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.fc = nn.Linear(16, 8)

    def forward(self, a, b):
        return self.fc(self.cnn(a)), self.fc(self.cnn(b))


def euclidean(e1, e2):
    return torch.sqrt(((e1 - e2) ** 2).sum(dim=1))  # <-- CUT


def make_pairs(images):
    # half the positives are the same image twice (augmentation disabled in the config)
    a = torch.cat([images[:4], images[4:8]])
    b = torch.cat([images[:4], images[8:12]])
    label = torch.cat([torch.zeros(4), torch.ones(4)])
    return a, b, label


def run():
    torch.manual_seed(0)
    net = SiameseCNN()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    images = torch.randn(12, 1, 8, 8)
    a, b, label = make_pairs(images)
    e1, e2 = net(a, b)
    d = euclidean(e1, e2)
    loss = ((1 - label) * d.pow(2) + label * torch.clamp(1.5 - d, min=0).pow(2)).mean()
    opt.zero_grad()
    loss.backward()
    return {"net": net, "loss": loss, "d": d}
