"""SphereFace-style head y_ij = ||x_i|| * cos(2 * theta_ij) written with theta =
cos_theta.clamp(-1, 1).acos(), the unstable variant from the forum thread. The class
weights are imprinted from the first batch's features, so one cos_theta is exactly 1 and
acos' derivative -1/sqrt(1 - x^2) is infinite there; anomaly mode reports NaN in backward.
Thread: discuss.pytorch.org/t/nan-gradient-for-torch-cos-torch-acos/9617
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class AngularHead(nn.Module):
    def __init__(self, d, n_cls):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, n_cls))

    @torch.no_grad()
    def imprint(self, feats, labels):
        for c in labels.unique():
            self.w[:, c] = feats[labels == c][0]

    def forward(self, x):
        xlen = x.pow(2).sum(1).pow(0.5).view(-1, 1)
        wlen = self.w.pow(2).sum(0).pow(0.5).view(1, -1)
        cos_theta = (x.mm(self.w) / xlen / wlen).clamp(-1, 1)
        theta = cos_theta.acos()  # <-- CUT
        cos_2_theta = torch.cos(2 * theta)
        return cos_2_theta * xlen.view(-1, 1)


class Extractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2, bias=False)
        with torch.no_grad():
            self.fc.weight.copy_(torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]))

    def forward(self, x):
        return self.fc(x)


def run():
    torch.manual_seed(0)
    ext = Extractor()
    head = AngularHead(2, 3)
    x = torch.tensor([[3.0, 4.0, 1.0, 0.0], [1.0, -2.0, 0.0, 1.0], [-2.0, 1.0, 1.0, 1.0]])
    y = torch.tensor([0, 1, 2])
    with torch.no_grad():
        head.imprint(ext(x), y)
    opt = torch.optim.SGD(list(ext.parameters()) + list(head.parameters()), lr=0.01)
    with torch.autograd.detect_anomaly(check_nan=True):
        loss = F.cross_entropy(head(ext(x)), y)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"ext": ext, "head": head, "loss": loss}
