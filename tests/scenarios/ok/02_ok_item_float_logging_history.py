"""Control: a training loop logs the loss with float(loss), the gradient norm
returned by clip_grad_norm_ with .item(), and the learning rate; none of the
logged values feeds the loss, so the weights get normal gradients.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[2].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.Linear(12, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    history = {"loss": [], "gnorm": [], "lr": []}
    for _ in range(2):
        x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
        loss = F.cross_entropy(model(x), y)  # <-- CUT
        opt.zero_grad()
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        history["loss"].append(float(loss))
        history["gnorm"].append(gnorm.item())
        history["lr"].append(opt.param_groups[0]["lr"])
        opt.step()
    return {"model": model, "loss": loss, "history": history}
