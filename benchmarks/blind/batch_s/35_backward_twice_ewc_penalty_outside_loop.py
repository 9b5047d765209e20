"""EWC on task B: the trainer computes the Fisher-weighted penalty once before
the training loop and adds the same tensor to every step's loss. The first
backward frees the penalty's graph, so the second step raises "Trying to
backward through the graph a second time"."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class EWC:
    def __init__(self, model, fisher, lam=10.0):
        self.star = {n: p.detach().clone() for n, p in model.named_parameters()}
        self.fisher, self.lam = fisher, lam

    def penalty(self, model):
        return self.lam * sum((self.fisher[n] * (p - self.star[n]) ** 2).sum()
                              for n, p in model.named_parameters())


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 2))
    fisher = {n: torch.rand_like(p) for n, p in model.named_parameters()}
    ewc = EWC(model, fisher)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = [(torch.randn(8, 5), torch.randint(0, 2, (8,))) for _ in range(3)]
    penalty = ewc.penalty(model)  # <-- CUT
    for x, y in batches:
        loss = F.cross_entropy(model(x), y) + penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"model": model, "loss": loss}
