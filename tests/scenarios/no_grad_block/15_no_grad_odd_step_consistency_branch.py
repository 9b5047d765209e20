"""Alternating training: even steps use the clean batch, odd steps use an augmented
view. The odd branch was copy-pasted from the eval code and keeps its `torch.no_grad()`,
so step 2 (the first odd step) raises in backward().
"""
import torch
import torch.nn as nn

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    crit = nn.MSELoss()
    for step in range(2):
        x, y = torch.randn(6, 4), torch.randn(6, 1)
        opt.zero_grad()
        if step % 2 == 0:
            out = model(x)
        else:
            x_aug = x + 0.1 * torch.randn_like(x)
            with torch.no_grad():
                out = model(x_aug)  # <-- CUT
        loss = crit(out, y)
        loss.backward()
        opt.step()
    return {"model": model, "loss": loss}
