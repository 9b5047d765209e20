"""Learning-to-rank: predicted ranks are computed with a double `argsort` and
compared to ground-truth ranks with MSE. argsort returns integer indices with
no gradient, so the loss has no grad_fn and backward raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "scorer.weight"
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    scorer = nn.Linear(5, 1)
    opt = torch.optim.SGD(scorer.parameters(), lr=0.01)
    docs = torch.randn(10, 5)
    relevance = torch.rand(10)
    true_rank = relevance.argsort(descending=True).argsort().float()
    scores = scorer(docs).squeeze(1)
    pred_rank = scores.argsort(descending=True).argsort()  # <-- CUT
    loss = F.mse_loss(pred_rank.float(), true_rank)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"scorer": scorer, "loss": loss}
