"""Hand-written focal loss for a one-stage detector's classification head. The
author clamps p_t in place after taking its log (to protect the (1 - p_t)**gamma
term), but log saved p_t for backward, so backward raises an in-place error.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class FocalLoss(nn.Module):
    def __init__(self, alpha=0.25, gamma=2.0, eps=1e-6):
        super().__init__()
        self.alpha, self.gamma, self.eps = alpha, gamma, eps

    def forward(self, logits, targets):
        probs = torch.sigmoid(logits)
        p_t = probs * targets + (1 - probs) * (1 - targets)
        log_pt = torch.log(p_t)
        p_t.clamp_(self.eps, 1 - self.eps)  # <-- CUT
        alpha_t = self.alpha * targets + (1 - self.alpha) * (1 - targets)
        return (-alpha_t * (1 - p_t) ** self.gamma * log_pt).sum() / targets.sum().clamp(min=1)


class RetinaClsHead(nn.Module):
    def __init__(self, c=16, n_anchors=3, n_cls=4):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.cls = nn.Conv2d(c, n_anchors * n_cls, 3, padding=1)
        nn.init.constant_(self.cls.bias, -4.595)
        self.n_cls = n_cls

    def forward(self, f):
        out = self.cls(self.conv(f))
        B, _, H, W = out.shape
        return out.view(B, -1, self.n_cls, H, W).permute(0, 3, 4, 1, 2).reshape(B, -1, self.n_cls)


def run():
    torch.manual_seed(0)
    head = RetinaClsHead()
    opt = torch.optim.SGD(head.parameters(), lr=0.01)
    feats = torch.randn(2, 16, 6, 6)
    logits = head(feats)
    targets = torch.zeros_like(logits)
    targets[:, ::17, 1] = 1.0
    loss = FocalLoss()(logits, targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"head": head, "loss": loss}
