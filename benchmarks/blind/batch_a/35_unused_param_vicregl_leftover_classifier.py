"""VICRegL after "Removes classification loss" (facebookresearch/VICRegL#10): the
online-evaluation classifier call is left in forward() but its result is no
longer assigned or used, so DDP needs find_unused_parameters=True:
model.classifier.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.classifier.weight"
EXPECT = "grad_none"


def vicreg_loss(x, y, sim_coeff=25.0, std_coeff=25.0, cov_coeff=1.0):
    repr_loss = F.mse_loss(x, y)
    x, y = x - x.mean(0), y - y.mean(0)
    std_x = torch.sqrt(x.var(dim=0) + 1e-4)
    std_y = torch.sqrt(y.var(dim=0) + 1e-4)
    std_loss = F.relu(1 - std_x).mean() / 2 + F.relu(1 - std_y).mean() / 2
    n, d = x.shape
    cov_x = (x.T @ x) / (n - 1)
    off = cov_x - torch.diag(torch.diag(cov_x))
    return sim_coeff * repr_loss + std_coeff * std_loss + cov_coeff * off.pow(2).sum() / d


class VICRegL(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.projector = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16))
        self.classifier = nn.Linear(8, num_classes)

    def forward(self, view1, view2, labels=None):
        maps1, maps2 = self.backbone(view1), self.backbone(view2)
        pooled1, pooled2 = maps1.mean(dim=(2, 3)), maps2.mean(dim=(2, 3))
        loss = vicreg_loss(self.projector(pooled1), self.projector(pooled2))
        self.classifier(pooled1.detach())  # <-- CUT
        return loss


def run():
    torch.manual_seed(0)
    model = VICRegL()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    view1, view2 = torch.randn(6, 3, 8, 8), torch.randn(6, 3, 8, 8)
    labels = torch.randint(0, 5, (6,))
    loss = model(view1, view2, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
