"""Saliency for a sequence model: the input series is created with
requires_grad=True and then rebound with `series = series.unsqueeze(-1)`
because the LSTM wants a feature dimension. The rebound name is a non-leaf
view, so after backward `series.grad` is None (with a UserWarning).
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "series"
EXPECT = "grad_none"


class SeqClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(1, 16, batch_first=True)
        self.fc = nn.Linear(16, 2)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


def saliency(model, series, cls):
    series = series.unsqueeze(-1)  # <-- CUT
    score = model(series)[:, cls].sum()
    score.backward()
    return series


def run():
    torch.manual_seed(0)
    model = SeqClassifier().eval()
    raw = torch.randn(3, 25, requires_grad=True)
    series = saliency(model, raw, cls=1)
    return {"model": model, "series": series, "raw": raw}
