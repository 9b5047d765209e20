"""A Poisson rate head computes rate = torch.exp(log_rate) and then clamps it in
place (rate.clamp_(max=1e4)) to avoid overflow. exp saved its output for
backward, so the in-place clamp makes backward raise.
"""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class RateHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 1)

    def forward(self, x):
        rate = torch.exp(self.fc(x))
        rate.clamp_(max=1e4)  # <-- CUT
        return rate


def run():
    torch.manual_seed(0)
    head = RateHead()
    x = torch.randn(7, 6)
    counts = torch.poisson(torch.full((7, 1), 2.0))
    rate = head(x)
    loss = (rate - counts * torch.log(rate + 1e-8)).mean()
    loss.backward()
    return {"head": head, "loss": loss}
