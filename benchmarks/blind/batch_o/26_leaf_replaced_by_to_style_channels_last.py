"""Style transfer speed-up: after creating the optimized image leaf the user
converts it with img = img.to(memory_format=torch.channels_last). The rebound
img is a non-leaf copy; img.grad is None after backward (the gradient lands on
the discarded original leaf).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "img"
EXPECT = "grad_none"


def gram(f):
    b, c, h, w = f.shape
    f = f.reshape(b * c, h * w)
    return f @ f.t() / f.numel()


class VGGish(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 16, 3, padding=1, stride=2)

    def forward(self, x):
        a = F.relu(self.c1(x))
        return [a, F.relu(self.c2(a))]


def run():
    torch.manual_seed(0)
    vgg = VGGish().eval().requires_grad_(False)
    content, style = torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)
    with torch.no_grad():
        style_grams = [gram(f) for f in vgg(style)]
        content_feat = vgg(content)[1]
    img = content.clone().requires_grad_(True)
    img = img.to(memory_format=torch.channels_last)  # <-- CUT
    feats = vgg(img)
    style_loss = sum(F.mse_loss(gram(f), g) for f, g in zip(feats, style_grams))
    loss = 1e5 * style_loss + F.mse_loss(feats[1], content_feat)
    loss.backward()
    return {"img": img, "loss": loss}
