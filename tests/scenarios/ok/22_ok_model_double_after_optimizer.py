"""Control: the model is converted with `model.double()` after the optimizer was
built, to run a float64 check. Module.double() converts each parameter in
place (the same Parameter objects), so the optimizer still holds the live
parameters and both steps train normally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][0]"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model = model.double()
    for _ in range(2):
        x = torch.randn(32, 5, dtype=torch.float64)
        y = x.sum(1, keepdim=True).sin()
        loss = F.mse_loss(model(x), y)  # <-- CUT
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"model": model, "opt": opt, "loss": loss}
