"""Imbalanced fraud classifier trained directly on "1 - F1". The F1Loss module thresholds
the sigmoid probabilities at 0.5 to count TP/FP/FN exactly like the sklearn metric, so the
loss is a constant and loss.backward() raises "element 0 of tensors does not require grad".
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class F1Loss(nn.Module):
    def __init__(self, threshold=0.5, eps=1e-7):
        super().__init__()
        self.threshold, self.eps = threshold, eps

    def forward(self, logits, target):
        probs = torch.sigmoid(logits)
        pred = (probs > self.threshold).float()  # <-- CUT
        tp = (pred * target).sum()
        fp = (pred * (1 - target)).sum()
        fn = ((1 - pred) * target).sum()
        f1 = 2 * tp / (2 * tp + fp + fn + self.eps)
        return 1 - f1


class FraudNet(nn.Module):
    def __init__(self, n_feat=12):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(n_feat, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 1))

    def forward(self, x):
        return self.mlp(x).squeeze(-1)


def run():
    torch.manual_seed(0)
    model = FraudNet()
    model.eval()
    crit = F1Loss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(64, 12)
    y = (torch.rand(64) < 0.1).float()
    loss = crit(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
