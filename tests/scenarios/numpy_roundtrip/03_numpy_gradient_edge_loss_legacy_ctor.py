"""An edge-aware loss computes image gradients with np.gradient on the
prediction and rebuilds them with the legacy torch.Tensor(...) constructor.
The L1 reconstruction term trains the last conv; the edge head gets no grad.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.edge.weight"
EXPECT = "grad_none"


class TwoOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.rgb = nn.Conv2d(3, 3, 3, padding=1)
        self.edge = nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, x):
        return self.rgb(x), self.edge(x)


def edge_loss(pred_edge, img):
    arr = pred_edge.detach().cpu().numpy()  # <-- CUT
    gy, gx = np.gradient(arr[:, 0], axis=(1, 2))
    mag = torch.Tensor(np.sqrt(gx ** 2 + gy ** 2))
    return (mag - img.mean(1)).abs().mean()


def run():
    torch.manual_seed(0)
    model = TwoOut()
    img = torch.rand(2, 3, 6, 6)
    rgb, edge = model(img)
    loss = F.l1_loss(rgb, img) + edge_loss(edge, img)
    loss.backward()
    return {"model": model, "loss": loss}
