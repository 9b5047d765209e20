"""A torchmetrics-style AveragePrecision metric used directly as the training loss (1 - AP).
The metric sorts the scores with argsort and then only reads the integer targets in that order,
so the result has no grad_fn and backward raises "element 0 of tensors does not require grad".
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "backward_error"


class AveragePrecision:
    """Minimal stand-in for a binary AveragePrecision metric (update/compute/__call__)."""

    def __init__(self):
        self.preds, self.target = [], []

    def update(self, preds, target):
        self.preds.append(preds.flatten())
        self.target.append(target.flatten())

    def compute(self):
        preds, target = torch.cat(self.preds), torch.cat(self.target)
        order = torch.argsort(preds, descending=True)  # <-- CUT
        tgt = target[order].float()
        tps = torch.cumsum(tgt, 0)
        precision = tps / torch.arange(1, len(tgt) + 1, dtype=torch.float32)
        return (precision * tgt).sum() / tgt.sum().clamp(min=1.0)

    def __call__(self, preds, target):
        self.preds, self.target = [], []
        self.update(preds, target)
        return self.compute()


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    metric = AveragePrecision()
    x = torch.randn(32, 6)
    y = (torch.rand(32) < 0.4).long()
    scores = torch.sigmoid(model(x)).squeeze(1)
    loss = 1.0 - metric(scores, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
