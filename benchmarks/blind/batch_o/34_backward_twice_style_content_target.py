"""Style transfer loss modules in the tutorial style, but ContentLoss stores its
target without .detach(). The content target came from a forward pass through
a feature net whose first layer is still trainable, so the second optimizer
iteration backpropagates through the freed target graph and raises "Trying to
backward through the graph a second time".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class ContentLoss(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target  # <-- CUT
        self.loss = 0.0

    def forward(self, x):
        self.loss = F.mse_loss(x, self.target)
        return x


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        return self.c2(F.relu(self.c1(x)))


def run():
    torch.manual_seed(0)
    feats = Features().eval()
    feats.c2.requires_grad_(False)
    content = torch.rand(1, 3, 8, 8)
    content_loss = ContentLoss(feats(content))
    img = content.clone() + 0.1 * torch.randn_like(content)
    img.requires_grad_(True)
    opt = torch.optim.Adam([img], lr=0.05)
    for step in range(2):
        opt.zero_grad()
        content_loss(feats(img))
        loss = content_loss.loss + 1e-3 * img.pow(2).mean()
        loss.backward()
        opt.step()
    return {"img": img, "loss": loss}
