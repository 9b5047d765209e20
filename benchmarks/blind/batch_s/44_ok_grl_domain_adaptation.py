"""Control: a correct DANN step. The gradient reversal Function returns
-lambd * grad for the features and None for lambd, and lambd follows the usual
2/(1+exp(-10p)) - 1 schedule computed as a Python float. The feature extractor
gets (reversed) domain and label gradients."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.features[0].weight"
EXPECT = "grad_ok"


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lambd):
        ctx.lambd = lambd
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g.neg() * ctx.lambd, None


class DANN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.cls = nn.Linear(16, 3)
        self.dom = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 1))


def run():
    torch.manual_seed(0)
    model = DANN()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xs, ys, xt = torch.randn(6, 8), torch.randint(0, 3, (6,)), torch.randn(6, 8) + 0.5
    p = 0.3
    lambd = 2.0 / (1.0 + float(np.exp(-10 * p))) - 1.0
    fs, ft = model.features(xs), model.features(xt)
    d = model.dom(GradReverse.apply(torch.cat([fs, ft]), lambd)).squeeze(1)
    dom_loss = F.binary_cross_entropy_with_logits(d, torch.cat([torch.zeros(6), torch.ones(6)]))
    loss = F.cross_entropy(model.cls(fs), ys) + dom_loss  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
