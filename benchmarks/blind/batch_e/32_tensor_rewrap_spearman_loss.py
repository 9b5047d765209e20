"""Custom correlation loss for gradient boosting via autograd
(TomerRonen34/treeboost_autograd#1): the user's loss receives ypred as a tensor with
requires_grad=True, reshapes it, then builds a new tensor with
torch.tensor(ypred.reshape(1, n), requires_grad=True). The maintainer points out that
the original ypred is then no longer in the graph and gets no gradient.
"""
import numpy as np
import torch

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "ypred"
EXPECT = "grad_none"


def soft_rank(x, regularization_strength=0.1):
    diff = (x.unsqueeze(-1) - x.unsqueeze(-2)) / regularization_strength
    return torch.sigmoid(diff).sum(-1) + 0.5


def spearman_loss(ypred, ytrue):
    lenypred = ypred.shape[0]
    lenytrue = ytrue.shape[0]
    ypred_th = torch.tensor(ypred.reshape(1, lenypred), requires_grad=True)  # <-- CUT
    ytrue_th = torch.tensor(ytrue.reshape(1, lenytrue))
    pred_r = soft_rank(ypred_th)
    true_r = soft_rank(ytrue_th)
    pred_r = pred_r - pred_r.mean()
    true_r = true_r - true_r.mean()
    corr = (pred_r * true_r).sum() / (pred_r.norm() * true_r.norm())
    return -corr


def grad_and_hess_for_booster(preds_np, targets_np):
    ypred = torch.from_numpy(preds_np).requires_grad_(True)
    loss = spearman_loss(ypred, targets_np)
    loss.backward()
    return ypred, loss


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    targets_np = rng.normal(size=12)
    preds_np = targets_np + 0.5 * rng.normal(size=12)
    ypred, loss = grad_and_hess_for_booster(preds_np, targets_np)
    return {"ypred": ypred, "loss": loss}
