"""Custom (non neural network) decay model fitted with Adam, as in the report that
math.exp/math.pow silently break gradients. The scalar exp helper converts its tensor
argument to a Python float first (what math.exp does internally), so the amplitude
trains but the learnable decay rate k never gets a gradient: model.k.grad is None.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.k"
EXPECT = "grad_none"

E = 2.718281828459045


def scalar_exp(x):
    """exp for scalar arguments (kept from the plain-Python prototype of the model)."""
    return E ** float(x)  # <-- CUT


class DecayModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.A = nn.Parameter(torch.tensor(1.0))
        self.k = nn.Parameter(torch.tensor(0.3))
        self.offset = nn.Parameter(torch.tensor(0.0))

    def forward(self, times):
        preds = []
        for t in times:
            preds.append(self.A * scalar_exp(-self.k * t) + self.offset)
        return torch.stack(preds)


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    times = np.linspace(0.0, 5.0, 12)
    observed = torch.tensor(2.0 * np.exp(-0.8 * times) + 0.05 * rng.standard_normal(12),
                            dtype=torch.float32)
    model = DecayModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    for epoch in range(3):
        optimizer.zero_grad()
        pred = model(times)
        loss = ((pred - observed) ** 2).mean()
        loss.backward()
        optimizer.step()
    return {"model": model, "optimizer": optimizer, "loss": loss}
