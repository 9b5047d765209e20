"""Control: a focal-style loss computes per-sample weights from the predicted
probabilities under torch.no_grad() (constants by design) and multiplies the
cross-entropy by them; the classifier trains normally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "clf[0].weight"
EXPECT = "grad_ok"


def focal_weights(logits, y, gamma=2.0):
    with torch.no_grad():
        p = F.softmax(logits, dim=1).gather(1, y[:, None]).squeeze(1)
        return (1 - p) ** gamma


def run():
    torch.manual_seed(0)
    clf = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 3))
    x, y = torch.randn(12, 5), torch.randint(0, 3, (12,))
    logits = clf(x)
    loss = (focal_weights(logits, y) * F.cross_entropy(logits, y, reduction="none")).mean()  # <-- CUT
    loss.backward()
    return {"clf": clf, "loss": loss}
