"""Domain-adversarial training (DANN) with a gradient-reversal hook. The hook that
should sit only on the domain-classifier input is registered on the shared
features, and the lambda schedule starts at 0 at step 0, so the hook returns
-0 * grad and the feature extractor gets an all-zero gradient.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.features[0].weight"
EXPECT = "grad_zero"


def grl_lambda(progress, gamma=10.0):
    return float(2.0 / (1.0 + np.exp(-gamma * progress)) - 1.0)


class DANN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.label_clf = nn.Linear(32, 3)
        self.domain_clf = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 1))
        self.lambd = 0.0

    def reverse(self, grad):
        return -self.lambd * grad  # <-- CUT

    def forward(self, x):
        f = self.features(x)
        f.register_hook(self.reverse)
        return self.label_clf(f), self.domain_clf(f).squeeze(-1)


def run():
    torch.manual_seed(0)
    model = DANN()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    step, total = 0, 100
    model.lambd = grl_lambda(step / total)
    xs, ys = torch.randn(16, 10), torch.randint(0, 3, (16,))
    xt = torch.randn(16, 10) + 0.5
    y_logits, d_src = model(xs)
    _, d_tgt = model(xt)
    loss = F.cross_entropy(y_logits, ys) + F.binary_cross_entropy_with_logits(
        torch.cat([d_src, d_tgt]), torch.cat([torch.zeros(16), torch.ones(16)]))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
