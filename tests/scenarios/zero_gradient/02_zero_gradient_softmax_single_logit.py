"""A binary classifier outputs a single logit per sample and applies
F.softmax(logits, dim=1) before an MSE loss on the probability. Softmax over one element is
always 1.0, so every gradient before it is exactly zero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_zero"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(10, 6)
    y = (torch.rand(10, 1) > 0.5).float()
    prob = F.softmax(model(x), dim=1)  # <-- CUT
    loss = F.mse_loss(prob, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
