"""A segmentation pipeline calls the framework helper pytorch_tensor_to_numpy()
between the encoder and the head to apply a numpy intensity rescaling, then
converts back with torch.from_numpy (delira-dev/delira#40: "Can
pytorch_tensor_to_numpy backward gradient?" - no). encoder[0].weight.grad is None.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[0].weight"
EXPECT = "grad_none"


def pytorch_tensor_to_numpy(tensor):
    return tensor.detach().cpu().numpy()  # <-- CUT


def percentile_rescale(arr, lo=1, hi=99):
    p_lo, p_hi = np.percentile(arr, lo), np.percentile(arr, hi)
    return np.clip((arr - p_lo) / (p_hi - p_lo + 1e-8), 0.0, 1.0).astype(np.float32)


class SegNet(nn.Module):
    def __init__(self, n_cls=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
        self.head = nn.Conv2d(8, n_cls, 1)

    def forward(self, x):
        feats = self.encoder(x)
        feats = torch.from_numpy(percentile_rescale(pytorch_tensor_to_numpy(feats)))
        return self.head(feats)


def run():
    torch.manual_seed(0)
    model = SegNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(2, 1, 8, 8)
    y = torch.randint(0, 3, (2, 8, 8))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
