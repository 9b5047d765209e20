"""pytorch/pytorch#22820 ("'DivBackward0' returned nan values in its 0th output"): a SMAPE
loss divides |pred - target| by |pred| + |target| and drops nan elements with a mask
before the mean. Zero-padded time steps have 0/0 in forward; the mask hides them from
the loss but not from backward, and with anomaly detection on, loss.backward() raises
"Function 'DivBackward0' returned nan values in its 0th output"."""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Forecaster(nn.Module):
    def __init__(self, t=6):
        super().__init__()
        self.lin = nn.Linear(t, t)

    def forward(self, x, pad):
        return self.lin(x) * (~pad).float()  # padded steps predict exactly 0


def smape(model_outputs, target_outputs):
    numerator = torch.abs(model_outputs - target_outputs)
    denominator = torch.abs(model_outputs) + torch.abs(target_outputs)
    elementwise_smape = torch.div(numerator, denominator)  # <-- CUT
    nan_mask = torch.isnan(elementwise_smape)
    return elementwise_smape[~nan_mask].mean()


def run():
    torch.manual_seed(0)
    model = Forecaster()
    x = torch.randn(4, 6)
    pad = torch.zeros(4, 6, dtype=torch.bool)
    pad[:, 4:] = True
    target = torch.randn(4, 6) * (~pad).float()
    with torch.autograd.detect_anomaly():
        loss = smape(model(x, pad), target)
        loss.backward()
    return {"model": model, "loss": loss}
