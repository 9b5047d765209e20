"""EWC Fisher estimation: the user decorated estimate_fisher() with
@torch.no_grad() "because it is only evaluation", but the Fisher diagonal needs
the squared gradients of the log-likelihood. The log-likelihood computed inside
does not require grad, so its backward() raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


@torch.no_grad()
def estimate_fisher(model, loader):
    fisher = {n: torch.zeros_like(p) for n, p in model.named_parameters()}
    for x, y in loader:
        logp = F.log_softmax(model(x), dim=1)  # <-- CUT
        nll = F.nll_loss(logp, y)
        model.zero_grad()
        nll.backward()
        for n, p in model.named_parameters():
            fisher[n] += p.grad ** 2 / len(loader)
    return fisher


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 10), nn.ReLU(), nn.Linear(10, 3))
    loader = [(torch.randn(5, 6), torch.randint(0, 3, (5,))) for _ in range(2)]
    fisher = estimate_fisher(model, loader)
    return {"model": model, "fisher": fisher}
