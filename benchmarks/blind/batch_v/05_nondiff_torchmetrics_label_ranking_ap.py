"""Multi-label model trained with BCE plus a label-ranking-AP term from a torchmetrics-style
metric. The metric ranks labels with comparisons `(scores >= s).sum()`, which carry no gradient,
so the separate ranking head that feeds only that term never gets a grad; the BCE head trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.rank_head.weight"
EXPECT = "grad_none"


def label_ranking_average_precision(preds, target):
    n, L = preds.shape
    total = preds.new_zeros(())
    for i in range(n):
        rel = target[i].bool()
        if rel.sum() == 0:
            continue
        s = preds[i]
        rank_all = (s.unsqueeze(0) >= s.unsqueeze(1)).float().sum(1)  # <-- CUT
        rank_rel = ((s.unsqueeze(0) >= s.unsqueeze(1)) & rel.unsqueeze(0)).float().sum(1)
        total = total + (rank_rel[rel] / rank_all[rel]).mean()
    return total / n


class MultiLabelNet(nn.Module):
    def __init__(self, d=10, L=5):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d, 32), nn.ReLU())
        self.cls_head = nn.Linear(32, L)
        self.rank_head = nn.Linear(32, L)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls_head(h), self.rank_head(h)


def run():
    torch.manual_seed(0)
    model = MultiLabelNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(12, 10)
    y = (torch.rand(12, 5) < 0.4).long()
    logits, rank_scores = model(x)
    bce = F.binary_cross_entropy_with_logits(logits, y.float())
    lrap = label_ranking_average_precision(torch.sigmoid(rank_scores), y)
    loss = bce + 0.5 * (1.0 - lrap)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "lrap": lrap}
