"""Neural style transfer: the generated image is created as a clone of the
content image with requires_grad, then ImageNet-normalized on the same line.
The queried `input_img` is therefore a non-leaf; its .grad is None after
backward although the hidden leaf behind it gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "input_img"
EXPECT = "grad_none"

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


def gram(f):
    b, c, h, w = f.shape
    f = f.view(b * c, h * w)
    return f @ f.t() / (b * c * h * w)


class FeatureNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        f1 = F.relu(self.c1(x))
        return f1, F.relu(self.c2(f1))


def run():
    torch.manual_seed(0)
    cnn = FeatureNet().eval().requires_grad_(False)
    content = torch.rand(1, 3, 8, 8)
    style = torch.rand(1, 3, 8, 8)
    with torch.no_grad():
        s1, _ = cnn((style - MEAN) / STD)
        _, c2 = cnn((content - MEAN) / STD)
        style_target = gram(s1)
    input_img = (content.clone().requires_grad_(True) - MEAN) / STD  # <-- CUT
    f1, f2 = cnn(input_img)
    loss = 1e4 * F.mse_loss(gram(f1), style_target) + F.mse_loss(f2, c2)
    loss.backward()
    return {"input_img": input_img, "loss": loss}
