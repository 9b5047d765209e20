"""Unsupervised domain adaptation for depth estimation with a gradient-reversal
hook on the encoder features. The reversal weight follows the DANN schedule
2/(1+exp(-10p))-1, which is 0 at step 0, so on the target-domain batch the hook
returns an all-zero gradient and the encoder's grad is exactly zero.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.enc[0].weight"
EXPECT = "grad_zero"


def grl_lambda(step, total):
    p = step / total
    return float(2.0 / (1.0 + np.exp(-10 * p)) - 1.0)


class DepthDA(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
        self.depth_head = nn.Conv2d(8, 1, 3, padding=1)
        self.domain_clf = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 1))
        self.lam = 0.0

    def reverse(self, grad):
        return -self.lam * grad  # <-- CUT

    def forward(self, img):
        f = self.enc(img)
        f_rev = f.view_as(f)
        f_rev.register_hook(self.reverse)
        return F.softplus(self.depth_head(f)), self.domain_clf(f_rev)


def run():
    torch.manual_seed(0)
    model = DepthDA()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    step, total = 0, 1000
    model.lam = grl_lambda(step, total)
    tgt_img = torch.rand(4, 3, 8, 8)
    _, dom = model(tgt_img)
    loss = F.binary_cross_entropy_with_logits(dom.squeeze(-1), torch.ones(4))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
