"""Control. Segmentation training with a Hausdorff-distance loss (SegWithDistMap
style): the distance maps of the prediction and the label are computed in numpy under
torch.no_grad() and enter the loss only as a multiplicative weight on
(seg_soft - gt)^2. That factor keeps the graph, so the network gets normal gradients.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net.enc[0].weight"
EXPECT = "grad_ok"


class SmallUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU())
        self.dec = nn.Conv2d(8, 2, 3, padding=1)

    def forward(self, x):
        return self.dec(self.enc(x))


def distance_map(mask):
    """Brute-force Euclidean distance of every pixel to the mask boundary (numpy)."""
    h, w = mask.shape
    fg = np.argwhere(mask > 0)
    bg = np.argwhere(mask == 0)
    if len(fg) == 0 or len(bg) == 0:
        return np.zeros((h, w), dtype=np.float32)
    yy, xx = np.mgrid[0:h, 0:w]
    pts = np.stack([yy.ravel(), xx.ravel()], axis=1)
    d_fg = np.sqrt(((pts[:, None, :] - fg[None]) ** 2).sum(-1)).min(1)
    d_bg = np.sqrt(((pts[:, None, :] - bg[None]) ** 2).sum(-1)).min(1)
    return np.where(mask.ravel() > 0, d_bg, d_fg).reshape(h, w).astype(np.float32)


def compute_dtm(img_gt):
    return np.stack([distance_map(m) for m in img_gt])


def hd_loss(seg_soft, gt, seg_dtm, gt_dtm):
    delta_s = (seg_soft[:, 1] - gt.float()) ** 2
    dtm = seg_dtm ** 2 + gt_dtm ** 2
    return torch.einsum("bxy,bxy->bxy", delta_s, dtm).mean()


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    net = SmallUNet()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    volume = torch.randn(2, 1, 12, 12)
    label_np = (rng.random((2, 12, 12)) > 0.6).astype(np.int64)
    label = torch.from_numpy(label_np)
    alpha = 0.7

    outputs = net(volume)
    seg_soft = torch.softmax(outputs, dim=1)
    loss_seg = F.cross_entropy(outputs, label)
    with torch.no_grad():
        gt_dtm = torch.from_numpy(compute_dtm(label.cpu().numpy()))
        seg_dtm = torch.from_numpy(compute_dtm((seg_soft[:, 1].cpu().numpy() > 0.5).astype(np.int64)))
    loss_hd = hd_loss(seg_soft, label, seg_dtm, gt_dtm)
    loss = alpha * loss_seg + (1 - alpha) * loss_hd  # <-- CUT
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"net": net, "optimizer": optimizer, "loss": loss, "loss_hd": loss_hd}
