"""CutMix with a learned box ratio: the box side is computed from the learnable
ratio and cast with .long() to index pixels, and the label-mixing lambda is
derived from that integer box area. The ratio never gets a gradient; the CNN
trains normally."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "mixer.ratio_logit"
EXPECT = "grad_none"


class LearnedCutMix(nn.Module):
    def __init__(self):
        super().__init__()
        self.ratio_logit = nn.Parameter(torch.tensor(0.0))

    def forward(self, x, y1h):
        H = x.shape[-1]
        side = (torch.sigmoid(self.ratio_logit) * H).long()  # <-- CUT
        perm = torch.arange(x.shape[0] - 1, -1, -1)
        mixed = x.clone()
        s = int(side)
        mixed[:, :, :s, :s] = x[perm, :, :s, :s]
        lam = 1.0 - side.float() ** 2 / (H * H)
        return mixed, lam * y1h + (1 - lam) * y1h[perm]


def run():
    torch.manual_seed(0)
    mixer = LearnedCutMix()
    cnn = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
    opt = torch.optim.SGD(list(cnn.parameters()) + list(mixer.parameters()), lr=0.1)
    x = torch.randn(6, 1, 8, 8)
    y1h = F.one_hot(torch.randint(0, 3, (6,)), 3).float()
    xm, ym = mixer(x, y1h)
    loss = -(ym * F.log_softmax(cnn(xm), 1)).sum(1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"mixer": mixer, "cnn": cnn, "loss": loss}
