"""Learned data augmentation: a differentiable brightness/noise policy with a
learnable magnitude. The policy turns the magnitude into a Python float with
.item() before scaling the noise, so the policy parameter never gets a gradient
while the classifier trains normally."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.log_mag"
EXPECT = "grad_none"


class AugPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_mag = nn.Parameter(torch.tensor(-1.0))
        self.shift = nn.Parameter(torch.zeros(1))

    def forward(self, x, noise):
        mag = self.log_mag.exp().item()  # <-- CUT
        return x + mag * noise + self.shift


def run():
    torch.manual_seed(0)
    policy = AugPolicy()
    clf = nn.Sequential(nn.Flatten(), nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = torch.optim.Adam(list(clf.parameters()) + list(policy.parameters()), lr=1e-2)
    x = torch.rand(8, 1, 4, 4)
    y = torch.randint(0, 2, (8,))
    noise = torch.randn_like(x)
    loss = F.cross_entropy(clf(policy(x, noise)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"policy": policy, "clf": clf, "loss": loss}
