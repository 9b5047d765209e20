"""A preprocessing helper decorated with @torch.inference_mode() normalises the
batch. The normalised tensor is an inference tensor; the first Linear must
save its input for the weight gradient and raises "Inference tensors cannot be saved".
"""
import torch
import torch.nn as nn

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


@torch.inference_mode()
def preprocess(raw, mean, std):
    return (raw - mean) / std  # <-- CUT


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    raw = torch.rand(6, 4) * 255
    x = preprocess(raw, raw.mean(0), raw.std(0))
    loss = model(x).pow(2).mean()
    loss.backward()
    return {"model": model, "loss": loss}
