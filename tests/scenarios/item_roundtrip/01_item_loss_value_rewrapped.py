"""The loss value is taken with .item() to accumulate it for a log, and the
logged float is turned back into the loss with torch.tensor(..., requires_grad=True)
so backward() does not complain. The encoder weight never receives a gradient.
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "encoder[0].weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 12))
    opt = torch.optim.Adam(encoder.parameters(), lr=1e-3)
    x = torch.randn(20, 12)
    running = 0.0
    recon = encoder(x)
    loss_value = nn.functional.mse_loss(recon, x).item()  # <-- CUT
    running += loss_value
    loss = torch.tensor(loss_value, requires_grad=True)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"encoder": encoder, "loss": loss, "running": running}
