"""The loss is picked from a dict of lambdas by config name. The "ordinal" entry rounds
the prediction to the nearest grade before the squared error, so every gradient that
reaches the regressor is exactly zero.
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_zero"

LOSSES = {
    "mse": lambda p, y: ((p - y) ** 2).mean(),
    "ordinal": lambda p, y: ((torch.round(p) - y) ** 2).mean(),  # <-- CUT
}


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    cfg = {"loss": "ordinal"}
    loss_fn = LOSSES[cfg["loss"]]
    x = torch.randn(16, 5)
    y = torch.randint(0, 5, (16, 1)).float()
    loss = loss_fn(model(x) * 4, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
