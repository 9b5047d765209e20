"""Variational fit of a Normal with a log-parameterised std: std = exp(log_std)
and the Normal are built once before the training loop so the loop only refers
to `dist`. The first backward frees the exp node's graph, so the second
iteration raises "Trying to backward through the graph a second time".
"""
import torch
import torch.nn as nn
import torch.distributions as dd

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    log_std = nn.Parameter(torch.tensor([1.0]))
    mean = nn.Parameter(torch.tensor([1.0]))
    std = torch.exp(log_std)  # <-- CUT
    dist = dd.Normal(loc=mean, scale=std)
    optim = torch.optim.SGD([log_std, mean], lr=0.01)
    target = dd.Normal(5.0, 5.0)
    for i in range(3):
        optim.zero_grad()
        samples = dist.rsample((100,))
        cost = -(target.log_prob(samples) - dist.log_prob(samples)).sum()
        cost.backward()
        optim.step()
    return {"log_std": log_std, "mean": mean, "cost": cost}
