"""k-fold training loop that rebuilds the model and optimizer for each fold. The fold's
training loss is computed with the same `@torch.no_grad()` predict() helper used for the
validation metrics, so backward raises: the loss has no grad_fn.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

CFG = {"folds": 3, "lr": 1e-2, "hidden": 8}


def build_model(cfg):
    return nn.Sequential(nn.Linear(4, cfg["hidden"]), nn.ReLU(), nn.Linear(cfg["hidden"], 2))


@torch.no_grad()
def predict(model, x):
    model.eval()
    return model(x)  # <-- CUT


def kfold_indices(n, k):
    idx = torch.arange(n)
    return [(torch.cat([idx[: i * n // k], idx[(i + 1) * n // k:]]), idx[i * n // k:(i + 1) * n // k]) for i in range(k)]


def train_fold(cfg, x, y, tr, va):
    model = build_model(cfg)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    model.train()
    logits = predict(model, x[tr])
    loss = F.cross_entropy(logits, y[tr])
    opt.zero_grad()
    loss.backward()
    opt.step()
    val_acc = (predict(model, x[va]).argmax(1) == y[va]).float().mean().item()
    return model, val_acc


def run():
    torch.manual_seed(0)
    x = torch.randn(30, 4)
    y = (x[:, 0] > 0).long()
    results = []
    for tr, va in kfold_indices(len(x), CFG["folds"]):
        results.append(train_fold(CFG, x, y, tr, va))
    return {"results": results}
