"""Landmark-guided face inpainting (LaFIn style): a landmark predictor outputs K heatmaps and the
landmark loss takes their coordinates with a flattened argmax (the index half of torch.max), which has
no gradient. The inpainting generator still trains from its L1 loss, but the landmark predictor's
head gets nothing: lm_net.head.weight.grad is None. Loss values are logged with .item().
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "lm_net.head.weight"
EXPECT = "grad_none"

CFG = {"num_landmarks": 5, "heatmap": 8, "lm_weight": 0.1}


class LandmarkNet(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(4, 8, 3, 2, 1), nn.ReLU())
        self.head = nn.Conv2d(8, k, 1)

    def forward(self, masked, mask):
        return self.head(self.body(torch.cat([masked, mask], 1)))


class InpaintGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1))

    def forward(self, masked, mask):
        return torch.sigmoid(self.net(torch.cat([masked, mask], 1)))


def heatmap_to_coords(heat):
    b, k, h, w = heat.shape
    _, idx = torch.max(heat.flatten(2), dim=-1)  # <-- CUT
    xs = (idx % w).float() / (w - 1)
    ys = torch.div(idx, w, rounding_mode="floor").float() / (h - 1)
    return torch.stack([xs, ys], -1)


def run():
    torch.manual_seed(0)
    lm_net, gen = LandmarkNet(CFG["num_landmarks"]), InpaintGenerator()
    opt = torch.optim.Adam(list(lm_net.parameters()) + list(gen.parameters()), lr=1e-4)
    images = torch.rand(2, 3, 16, 16)
    masks = torch.zeros(2, 1, 16, 16)
    masks[:, :, 4:12, 4:12] = 1.0
    gt_landmarks = torch.rand(2, CFG["num_landmarks"], 2)
    masked = images * (1 - masks)

    heat = lm_net(masked, masks)
    pred_lm = heatmap_to_coords(heat)
    lm_loss = F.mse_loss(pred_lm, gt_landmarks)
    out = gen(masked, masks)
    l1_loss = F.l1_loss(out * masks, images * masks)
    loss = l1_loss + CFG["lm_weight"] * lm_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    logs = {"l1": l1_loss.item(), "lm": lm_loss.item()}
    return {"lm_net": lm_net, "gen": gen, "heat": heat, "loss": loss, "logs": logs}
