"""Two-branch image fusion: combine_images() keeps, per pixel, the branch closer to the
target. The user first asked whether the comparison mask breaks autograd (it does not);
then moved the whole selection into np.where for speed and returned torch.from_numpy, so
neither branch network gets a gradient from the fusion loss.
Thread: discuss.pytorch.org/t/is-the-type-conversion-differentiable/45436
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "fuser.branch_a[0].weight"
EXPECT = "grad_none"


def conv_branch():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1))


class Fuser(nn.Module):
    def __init__(self):
        super().__init__()
        self.branch_a = conv_branch()
        self.branch_b = conv_branch()

    def forward(self, img):
        return self.branch_a(img), self.branch_b(img)


def combine_images(target, x, y):
    diff1 = torch.abs(target - x)
    diff2 = torch.abs(target - y)
    x_np, y_np = x.detach().numpy(), y.detach().numpy()  # <-- CUT
    mask = (diff1 < diff2).numpy()
    return torch.from_numpy(np.where(mask, x_np, y_np))


def run():
    torch.manual_seed(0)
    fuser = Fuser()
    refine = nn.Conv2d(3, 3, 1)
    opt = torch.optim.Adam(list(fuser.parameters()) + list(refine.parameters()), lr=1e-3)
    img = torch.rand(2, 3, 8, 8)
    target = torch.rand(2, 3, 8, 8)
    a, b = fuser(img)
    fused = combine_images(target, a, b)
    loss = F.l1_loss(refine(fused), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"fuser": fuser, "refine": refine, "loss": loss}
