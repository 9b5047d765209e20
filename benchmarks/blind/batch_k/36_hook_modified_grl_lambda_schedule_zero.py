"""Domain-adversarial training (DANN) with the gradient reversal written as a tensor hook,
g -> -lambda * g, where lambda follows the 2/(1+exp(-10p)) - 1 schedule. At step 0 (p = 0) the
hook returns zero gradients, so the domain adapter model.adapter.weight.grad is all zeros.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.adapter.weight"
EXPECT = "grad_zero"


def grl_lambda(step, total):
    p = step / total
    return 2.0 / (1.0 + float(np.exp(-10 * p))) - 1.0


class DANN(nn.Module):
    def __init__(self, d_in=16, d=32, n_cls=3):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(d_in, d), nn.ReLU())
        self.classifier = nn.Linear(d, n_cls)
        self.adapter = nn.Linear(d, d)
        self.domain_head = nn.Sequential(nn.ReLU(), nn.Linear(d, 1))

    def forward(self, x, lam):
        f = self.features(x)
        logits = self.classifier(f)
        a = self.adapter(f)
        if a.requires_grad:
            a.register_hook(lambda g: self.reverse(g, lam))
        return logits, self.domain_head(a).squeeze(-1)

    @staticmethod
    def reverse(g, lam):
        return -lam * g  # <-- CUT


def run():
    torch.manual_seed(0)
    model = DANN()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    xs, ys, xt = torch.randn(32, 16), torch.randint(0, 3, (32,)), torch.randn(32, 16) + 0.5
    step, total = 0, 1000
    lam = grl_lambda(step, total)
    logits_s, dom_s = model(xs, lam)
    _, dom_t = model(xt, lam)
    dom = torch.cat([dom_s, dom_t])
    dom_y = torch.cat([torch.zeros(32), torch.ones(32)])
    loss = F.cross_entropy(logits_s, ys) + F.binary_cross_entropy_with_logits(dom, dom_y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "lam": lam}
