"""A Keras-style `Lambda` wrapper module is used inside `nn.Sequential` to clip
activations; the lambda does the clipping in numpy and wraps the result back with
`torch.from_numpy`. Everything before the Lambda stops receiving gradients.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_none"


class Lambda(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def run():
    torch.manual_seed(0)
    clip = Lambda(lambda t: torch.from_numpy(np.clip(t.detach().numpy(), -1.0, 1.0)))  # <-- CUT
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), clip, nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(6, 4), torch.randn(6, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
