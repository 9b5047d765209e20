"""Learned augmentation policy with a learnable application probability: the
policy samples apply = (u < sigmoid(p_logit)).float() and applies the flip only
where apply is 1. The comparison has no gradient, so p_logit never learns; the
policy's magnitude parameter does."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.p_logit"
EXPECT = "grad_none"


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.p_logit = nn.Parameter(torch.zeros(1))
        self.magnitude = nn.Parameter(torch.tensor(0.2))

    def forward(self, x, u):
        prob = torch.sigmoid(self.p_logit)
        apply = (u < prob).float()  # <-- CUT
        aug = x + self.magnitude * torch.flip(x, dims=[1])
        return apply[:, None] * aug + (1 - apply[:, None]) * x


def run():
    torch.manual_seed(0)
    policy = Policy()
    clf = nn.Sequential(nn.Linear(6, 10), nn.ReLU(), nn.Linear(10, 3))
    opt = torch.optim.Adam(list(policy.parameters()) + list(clf.parameters()), lr=1e-2)
    x, y = torch.randn(12, 6), torch.randint(0, 3, (12,))
    u = torch.rand(12)
    loss = F.cross_entropy(clf(policy(x, u)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"policy": policy, "clf": clf, "loss": loss}
