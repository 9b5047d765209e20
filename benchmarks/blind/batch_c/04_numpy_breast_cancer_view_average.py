"""Four-view mammography classifier trained with the repo's run_model() logic: the
per-view probabilities are detached to numpy, averaged per breast/label, and re-wrapped
with torch.tensor(predictions, requires_grad=True) so that backward runs. The loss
trains nothing: the view network's conv weights get no gradient.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.view_net[0].weight"
EXPECT = "grad_none"

VIEWS = ["L-CC", "R-CC", "L-MLO", "R-MLO"]
LABELS = ["left_benign", "right_benign", "left_malignant", "right_malignant"]


class SplitBreastModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.view_net = nn.Sequential(nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.heads = nn.ModuleDict({v.replace("-", "_"): nn.Linear(16, 4) for v in VIEWS})

    def forward(self, images):
        out = {}
        for view in VIEWS:
            h = self.view_net(images[view]).mean(dim=(2, 3))
            # (benign, malignant) x (negative, positive) log-probabilities
            out[view] = F.log_softmax(self.heads[view.replace("-", "_")](h).view(-1, 2, 2), dim=-1)
        return out


def compute_batch_predictions(y_hat):
    batch_prediction = {}
    for view, log_probs in y_hat.items():
        batch_prediction[view] = np.exp(log_probs.detach().cpu().numpy())  # <-- CUT
    return batch_prediction


def average_views(batch_predictions):
    side = {"L": ["L-CC", "L-MLO"], "R": ["R-CC", "R-MLO"]}
    cols = []
    for label in LABELS:
        s = "L" if label.startswith("left") else "R"
        k = 0 if label.endswith("benign") else 1
        cols.append(np.mean([batch_predictions[v][:, k, 1] for v in side[s]], axis=0))
    return np.stack(cols, axis=1)


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = SplitBreastModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    images = {v: torch.randn(2, 1, 32, 32) for v in VIEWS}
    birads_labels = rng.integers(0, 2, size=(2, 4)).astype(np.float32)

    output = model(images)
    predictions = average_views(compute_batch_predictions(output))
    gt = torch.tensor(birads_labels, dtype=torch.float, requires_grad=True)
    predictions = torch.tensor(predictions, dtype=torch.float, requires_grad=True)
    loss = F.binary_cross_entropy(predictions, gt)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "optimizer": optimizer, "loss": loss, "predictions": predictions}
