"""Set encoder with masked attention pooling: padded positions get -inf before the
softmax. One sample in the batch is empty (length 0), so its whole score row is
-inf, the softmax gives NaN, and backward produces NaN gradients; with anomaly
detection on, backward raises "returned nan values".
Thread: SO, softmax NaN when every position is masked (pattern; thread not located).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class AttnPool(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.proj = nn.Linear(4, d)
        self.score = nn.Linear(d, 1)
        self.out = nn.Linear(d, 2)

    def forward(self, x, lengths):
        h = torch.tanh(self.proj(x))
        s = self.score(h).squeeze(-1)
        pad = torch.arange(x.size(1)).unsqueeze(0) >= lengths.unsqueeze(1)
        s = s.masked_fill(pad, float("-inf"))  # <-- CUT
        w = torch.softmax(s, dim=1)
        return self.out((w.unsqueeze(-1) * h).sum(1))


def run():
    torch.manual_seed(0)
    model = AttnPool()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(3, 5, 4)
    lengths = torch.tensor([5, 2, 0])
    y = torch.tensor([0, 1, 1])
    with torch.autograd.detect_anomaly():
        loss = F.cross_entropy(model(x, lengths), y)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
