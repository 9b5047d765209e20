"""Per-sample loop fills a prediction buffer made with `torch.zeros_like(y)`.
`y` holds integer counts (int64), so `preds[i] = model(x[i])` silently casts each
prediction to int64; the buffer has no history and the MSE backward raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(6, 5)
    y = torch.randint(0, 10, (6,))
    preds = torch.zeros_like(y)
    for i in range(len(x)):
        preds[i] = model(x[i]).squeeze() * 10  # <-- CUT
    loss = F.mse_loss(preds.float(), y.float())
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
