"""BlockDrop-style dynamic depth: a policy head gives per-sample skip/keep
logits, `F.gumbel_softmax(..., hard=True)` gives a straight-through one-hot and
`.bool()` turns the keep column into a mask for torch.where. The cast drops the
straight-through gradient, so the policy head gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.policy.weight"
EXPECT = "grad_none"


class SkipNet(nn.Module):
    def __init__(self, d=16, n_blocks=3):
        super().__init__()
        self.stem = nn.Linear(10, d)
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(d, d), nn.ReLU()) for _ in range(n_blocks))
        self.policy = nn.Linear(d, 2 * n_blocks)
        self.head = nn.Linear(d, 3)

    def forward(self, x):
        h = self.stem(x)
        logits = self.policy(h.detach()).view(-1, len(self.blocks), 2)
        for i, blk in enumerate(self.blocks):
            keep = F.gumbel_softmax(logits[:, i], tau=1.0, hard=True)[:, 1].bool()  # <-- CUT
            h = torch.where(keep[:, None], blk(h), h)
        return self.head(h)


def run():
    torch.manual_seed(0)
    model = SkipNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
