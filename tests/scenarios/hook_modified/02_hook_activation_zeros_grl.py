"""A gradient reversal layer for domain adaptation is implemented as a hook on the
features that should return -lambda * grad, but lambda comes from a schedule
that is 0 at step 0 and the hook returns zeros. The encoder's grad is all zero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "encoder[0].weight"
EXPECT = "grad_zero"


def grl_lambda(step, total):
    return 2.0 / (1.0 + float(torch.exp(torch.tensor(-10.0 * step / total)))) - 1.0


def run():
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
    domain_clf = nn.Linear(16, 2)
    lam = grl_lambda(0, 100)
    x = torch.randn(8, 10)
    d = torch.randint(0, 2, (8,))
    feats = encoder(x)
    feats.register_hook(lambda g: -lam * g)  # <-- CUT
    loss = F.cross_entropy(domain_clf(feats), d)
    loss.backward()
    return {"encoder": encoder, "domain_clf": domain_clf, "loss": loss}
