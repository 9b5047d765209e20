"""Style transfer with LBFGS: the "keep pixels in [0, 1]" clamp was moved inside
the closure after the loss is computed and before backward. clamp_ under
no_grad bumps the version of the image leaf that the first conv saved, so
backward raises "modified by an inplace operation".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def gram(f):
    b, c, h, w = f.shape
    f = f.view(b * c, h * w)
    return f @ f.t() / (c * h * w)


class StyleNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        a = F.relu(self.conv1(x))
        return a, F.relu(self.conv2(a))


def run_style_transfer(cnn, content, style, input_img, steps=1, style_weight=1e4):
    with torch.no_grad():
        s1, _ = cnn(style)
        _, c2 = cnn(content)
        target_gram = gram(s1)
    input_img.requires_grad_(True)
    optimizer = torch.optim.LBFGS([input_img], max_iter=2)
    losses = []

    def closure():
        optimizer.zero_grad()
        f1, f2 = cnn(input_img)
        loss = style_weight * F.mse_loss(gram(f1), target_gram) + F.mse_loss(f2, c2)
        with torch.no_grad():
            input_img.clamp_(0, 1)  # <-- CUT
        loss.backward()
        losses.append(loss.item())
        return loss

    for _ in range(steps):
        optimizer.step(closure)
    return input_img, losses


def run():
    torch.manual_seed(0)
    cnn = StyleNet().eval().requires_grad_(False)
    content, style = torch.rand(1, 3, 8, 8), torch.rand(1, 3, 8, 8)
    img, losses = run_style_transfer(cnn, content, style, content.clone())
    return {"img": img, "losses": losses}
