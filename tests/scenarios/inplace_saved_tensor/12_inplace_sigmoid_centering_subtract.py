"""Autoencoder whose bottleneck code is squashed with sigmoid and then centred in
place with `z -= z.mean(dim=0)` ("to save memory"). Sigmoid saves its output for
backward, so `loss.backward()` raises "one of the variables needed for gradient
computation has been modified by an inplace operation".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(20, 4)
        self.dec = nn.Linear(4, 20)

    def forward(self, x):
        z = torch.sigmoid(self.enc(x))
        z -= z.mean(dim=0, keepdim=True)  # <-- CUT
        return self.dec(z)


def run():
    torch.manual_seed(0)
    model = AE()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(8, 20)
    loss = F.mse_loss(model(x), x)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
