"""Receptive-field probe (receptivefield-style) for a bias-free conv+ReLU feature
extractor: the probe feeds torch.zeros as the input image, backpropagates the centre
activation and looks at where the input gradient is non-zero. With a zero input every
pre-activation is exactly 0, ReLU passes no gradient, and img.grad is all zeros.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "probe['img']"
EXPECT = "grad_zero"


class FeatureExtractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1, bias=False)
        self.conv3 = nn.Conv2d(16, 16, 3, padding=1, bias=False)

    def forward(self, x):
        x = F.relu(self.conv1(x))  # <-- CUT
        x = F.max_pool2d(x, 2)
        x = F.relu(self.conv2(x))
        return F.relu(self.conv3(x))


def probe_receptive_field(model, input_shape):
    img = torch.zeros(1, *input_shape, requires_grad=True)
    feat = model(img)
    _, _, h, w = feat.shape
    center = feat[0, 0, h // 2, w // 2]
    model.zero_grad()
    center.backward()
    grad_map = img.grad[0].abs().sum(dim=0)
    rows = torch.nonzero(grad_map.sum(dim=1)).flatten()
    cols = torch.nonzero(grad_map.sum(dim=0)).flatten()
    rf = (int(rows.numel()), int(cols.numel()))
    return {"img": img, "feat": feat, "grad_map": grad_map, "rf": rf}


def run():
    torch.manual_seed(0)
    model = FeatureExtractor().eval()
    probe = probe_receptive_field(model, (3, 16, 16))
    return {"model": model, "probe": probe}
