"""Uncertainty-weighted multi-task loss written in vector form:
total = torch.stack(losses) * exp(-log_vars) + log_vars is a 3-element tensor,
and total.backward() is called without summing it, so backward raises "grad can
be implicitly created only for scalar outputs".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "other:nonscalar_backward_without_grad_outputs"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class HydraNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Sequential(nn.Linear(8, 32), nn.ReLU())
        self.heads = nn.ModuleDict({"age": nn.Linear(32, 1), "gender": nn.Linear(32, 2),
                                    "race": nn.Linear(32, 5)})

    def forward(self, x):
        h = self.shared(x)
        return {k: head(h) for k, head in self.heads.items()}


class MultiTaskLoss(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.log_vars = nn.Parameter(torch.zeros(n))

    def forward(self, out, tgt):
        losses = [F.l1_loss(out["age"].squeeze(1), tgt["age"]),
                  F.cross_entropy(out["gender"], tgt["gender"]),
                  F.cross_entropy(out["race"], tgt["race"])]
        total = torch.stack(losses) * torch.exp(-self.log_vars) + self.log_vars  # <-- CUT
        return total


def run():
    torch.manual_seed(0)
    model, crit = HydraNet(), MultiTaskLoss(3)
    opt = torch.optim.Adam(list(model.parameters()) + list(crit.parameters()), lr=1e-3)
    x = torch.randn(8, 8)
    tgt = {"age": torch.rand(8) * 80, "gender": torch.randint(0, 2, (8,)),
           "race": torch.randint(0, 5, (8,))}
    loss = crit(model(x), tgt)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "crit": crit, "loss": loss}
