"""The loop accumulates `total_loss += loss` (a tensor, for logging) and calls
total_loss.backward() each iteration. From the second batch on, backward runs
again through the first batch's freed graph and raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    total_loss = 0
    for _ in range(3):
        x, y = torch.randn(4, 5), torch.randn(4, 1)
        loss = F.mse_loss(model(x), y)
        total_loss += loss  # <-- CUT
        opt.zero_grad()
        total_loss.backward()
        opt.step()
    return {"model": model, "loss": total_loss}
