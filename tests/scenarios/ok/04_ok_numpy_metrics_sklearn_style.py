"""Control: after the training step, AUC-like metrics are computed in NumPy from
torch.sigmoid(logits).detach().cpu().numpy() and the labels; the arrays never
go back into torch, and the classifier's gradient is intact.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "clf.weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    clf = nn.Linear(7, 1)
    opt = torch.optim.SGD(clf.parameters(), lr=0.1)
    x = torch.randn(20, 7)
    y = (torch.rand(20) > 0.5).float()
    logits = clf(x).squeeze(-1)
    loss = F.binary_cross_entropy_with_logits(logits, y)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    probs = torch.sigmoid(logits).detach().cpu().numpy()
    labels = y.numpy()
    order = np.argsort(-probs)
    tpr = np.cumsum(labels[order]) / max(labels.sum(), 1.0)
    metrics = {"acc": float(((probs > 0.5) == labels).mean()), "tpr_at_5": float(tpr[4])}
    return {"clf": clf, "loss": loss, "metrics": metrics}
