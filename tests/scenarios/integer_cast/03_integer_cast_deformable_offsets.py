"""Hand-rolled 1-D deformable sampling: an offset head predicts where to sample
each position, and the sample index is `(base + offset).long()` so it can be
used with gather. The cast to int64 kills the gradient: the features and the
output layer train, the offset head gets no gradient at all.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.offset.weight"
EXPECT = "grad_none"


class DeformSample1d(nn.Module):
    def __init__(self, c=8, length=16):
        super().__init__()
        self.length = length
        self.offset = nn.Conv1d(c, 1, 3, padding=1)
        self.mix = nn.Conv1d(c, c, 1)
        self.out = nn.Linear(c, 2)

    def forward(self, x):  # x: (B, C, L)
        base = torch.arange(self.length, dtype=x.dtype).expand(x.shape[0], -1)
        pos = (base + 4.0 * torch.tanh(self.offset(x).squeeze(1))).clamp(0, self.length - 1)
        idx = pos.long()  # <-- CUT
        sampled = x.gather(2, idx.unsqueeze(1).expand(-1, x.shape[1], -1))
        h = F.relu(self.mix(sampled))
        return self.out(h.mean(dim=2))


def run():
    torch.manual_seed(0)
    model = DeformSample1d()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(6, 8, 16)
    y = torch.randint(0, 2, (6,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
