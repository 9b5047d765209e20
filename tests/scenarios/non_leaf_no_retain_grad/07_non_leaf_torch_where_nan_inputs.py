"""Input-attribution script: the input is created with `requires_grad=True`, then
NaNs from the sensor data are cleaned with `inputs = torch.where(torch.isnan(inputs),
0.0, inputs)`. The name now refers to a non-leaf result, so `inputs.grad` is None.
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "inputs"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
    model.eval()
    raw = torch.randn(4, 6)
    raw[1, 2] = float("nan")
    inputs = raw.clone().requires_grad_(True)
    inputs = torch.where(torch.isnan(inputs), 0.0, inputs)  # <-- CUT
    score = model(inputs).sum()
    score.backward()
    saliency = inputs.grad
    return {"model": model, "inputs": inputs, "score": score, "saliency": saliency}
