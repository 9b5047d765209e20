"""A learnable loss temperature is refreshed in `on_step_start()`, which stores it on
`self` as a Python float via `.item()` "for logging"; `compute_loss()` later reads that
attribute instead of the parameter, so `log_tau` never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "crit.log_tau"
EXPECT = "grad_none"


class TemperedCE(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_tau = nn.Parameter(torch.tensor(0.0))
        self.tau = 1.0

    def on_step_start(self):
        self.tau = self.log_tau.exp().item()  # <-- CUT

    def compute_loss(self, logits, y):
        return F.cross_entropy(logits / self.tau, y)


def run():
    torch.manual_seed(0)
    model = nn.Linear(6, 3)
    crit = TemperedCE()
    opt = torch.optim.SGD(list(model.parameters()) + list(crit.parameters()), lr=0.1)
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    crit.on_step_start()
    logits = model(x)
    loss = crit.compute_loss(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "crit": crit, "loss": loss}
