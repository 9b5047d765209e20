"""Monocular depth: the scale-invariant log loss is computed in numpy after
median-scaling the prediction (copied from the evaluation script), then turned
back into a tensor for `loss.backward()`. Nothing in the loss requires grad, so
backward raises "element 0 of tensors does not require grad".
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, stride=2, padding=1))
        self.dec = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, img):
        h = F.relu(self.enc(img))
        h = F.interpolate(h, scale_factor=2, mode="bilinear", align_corners=False)
        return F.softplus(self.dec(h)) + 1e-3


def silog_np(pred, gt, mask, lam=0.85):
    pred = pred * np.median(gt[mask]) / np.median(pred[mask])
    d = np.log(pred[mask]) - np.log(gt[mask])
    return np.sqrt((d ** 2).mean() - lam * d.mean() ** 2)


class Trainer:
    def __init__(self):
        self.net = DepthNet()
        self.opt = torch.optim.Adam(self.net.parameters(), lr=1e-4)

    def step(self, img, gt):
        pred = self.net(img)
        pred_np = pred.detach().cpu().numpy()  # <-- CUT
        gt_np = gt.numpy()
        loss = torch.as_tensor(silog_np(pred_np, gt_np, gt_np > 0.1), dtype=torch.float32)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    tr = Trainer()
    img = torch.rand(2, 3, 8, 8)
    gt = torch.rand(2, 1, 8, 8) * 10
    loss = tr.step(img, gt)
    return {"tr": tr, "loss": loss}
