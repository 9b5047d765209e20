"""Multi-task loss with learned homoscedastic-uncertainty weights (log variances)
kept as a plain tensor attribute of the loss module. Because module.to() does not
move plain attributes, `to_device()` rebinds `self.log_vars = self.log_vars.to(...)`
for the float64 run; the copy is not a leaf and `criterion.log_vars.grad` is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "criterion.log_vars"
EXPECT = "grad_none"

CONFIG = {"device": "cpu", "dtype": torch.float64, "n_tasks": 2}


class UncertaintyWeightedLoss(nn.Module):
    def __init__(self, n_tasks):
        super().__init__()
        self.log_vars = torch.zeros(n_tasks, requires_grad=True)

    def to_device(self, device, dtype):
        self.log_vars = self.log_vars.to(device=device, dtype=dtype)  # <-- CUT
        return self.to(device=device, dtype=dtype)

    def forward(self, losses):
        total = 0.0
        for i, l in enumerate(losses):
            total = total + torch.exp(-self.log_vars[i]) * l + self.log_vars[i]
        return total


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, 32), nn.ReLU())
        self.reg_head = nn.Linear(32, 1)
        self.cls_head = nn.Linear(32, 3)

    def forward(self, x):
        h = self.trunk(x)
        return self.reg_head(h).squeeze(-1), self.cls_head(h)


def run():
    torch.manual_seed(0)
    cfg = CONFIG
    model = MultiTaskNet().to(device=cfg["device"], dtype=cfg["dtype"])
    criterion = UncertaintyWeightedLoss(cfg["n_tasks"])
    opt = torch.optim.Adam(list(model.parameters()) + [criterion.log_vars], lr=1e-3)
    criterion = criterion.to_device(cfg["device"], cfg["dtype"])
    x = torch.randn(16, 8, dtype=cfg["dtype"])
    y_reg, y_cls = torch.randn(16, dtype=cfg["dtype"]), torch.randint(0, 3, (16,))
    reg, logits = model(x)
    loss = criterion([F.mse_loss(reg, y_reg), F.cross_entropy(logits, y_cls)])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "criterion": criterion, "opt": opt, "loss": loss}
