"""Multi-head model: each head has its own projection. A stop-gradient set meant to hold
only the auxiliary head index 0 was written as {1}, so the list comprehension detaches the
projection of head 1; its projection weight never gets a gradient.
"""
import torch
import torch.nn as nn

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.projs[1].weight"
EXPECT = "grad_none"


class MultiHead(nn.Module):
    def __init__(self, n_heads=3):
        super().__init__()
        self.projs = nn.ModuleList(nn.Linear(6, 4) for _ in range(n_heads))
        self.out = nn.Linear(4 * n_heads, 2)
        self.stop_grad = {1}

    def forward(self, x):
        hs = [p(x).detach() if i in self.stop_grad else p(x) for i, p in enumerate(self.projs)]  # <-- CUT
        return self.out(torch.cat(hs, dim=-1))


def run():
    torch.manual_seed(0)
    model = MultiHead()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
