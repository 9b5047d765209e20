"""Reproduces XiaLiPKU/EMANet#14 ("no grad back propagate to EMAU.conv1?"): the EM attention
unit runs its E/M iterations under torch.no_grad(), and the reconstruction `mu @ z^T` uses the
bases and responsibilities produced there. Nothing downstream connects back to conv1 (the
author confirms this is intended), so emau.conv1.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.emau.conv1.weight"
EXPECT = "grad_none"


class EMAU(nn.Module):
    def __init__(self, c, k, stage_num=3):
        super().__init__()
        self.stage_num = stage_num
        mu = torch.randn(1, c, k) * (2.0 / k) ** 0.5
        self.register_buffer("mu", F.normalize(mu, dim=1))
        self.conv1 = nn.Conv2d(c, c, 1)
        self.conv2 = nn.Sequential(nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        idn = x
        x = self.conv1(x)
        b, c, h, w = x.size()
        x = x.view(b, c, h * w)
        mu = self.mu.repeat(b, 1, 1)
        with torch.no_grad():
            for _ in range(self.stage_num):
                x_t = x.permute(0, 2, 1)
                z = F.softmax(torch.bmm(x_t, mu), dim=2)
                z_ = z / (1e-6 + z.sum(dim=1, keepdim=True))
                mu = F.normalize(torch.bmm(x, z_), dim=1)  # <-- CUT
        z_t = z.permute(0, 2, 1)
        x = mu.matmul(z_t).view(b, c, h, w)
        x = F.relu(x)
        x = self.conv2(x)
        return F.relu(x + idn), mu


class EMANetLite(nn.Module):
    def __init__(self, n_cls=4, c=8, k=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU())
        self.emau = EMAU(c, k)
        self.head = nn.Conv2d(c, n_cls, 1)

    def forward(self, img):
        x, mu = self.emau(self.backbone(img))
        return self.head(x), mu


def run():
    torch.manual_seed(0)
    model = EMANetLite()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    img = torch.randn(2, 3, 8, 8)
    lbl = torch.randint(0, 4, (2, 8, 8))
    logits, mu = model(img)
    loss = F.cross_entropy(logits, lbl)
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        model.emau.mu.mul_(0.9).add_(0.1 * mu.mean(dim=0, keepdim=True))
    return {"model": model, "loss": loss}
