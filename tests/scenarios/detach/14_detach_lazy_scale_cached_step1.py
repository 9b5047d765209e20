"""A scale-prediction net is lazily evaluated on the first batch and cached on the
trainer (`self.scale`), detached "to save memory". Steps 2 and 3 reuse the cache, so
the scale net never enters any graph; after step 3 its weight grad is still None.
"""
import torch
import torch.nn as nn

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.scale_net.weight"
EXPECT = "grad_none"


class Trainer:
    def __init__(self):
        self.model = nn.Linear(4, 1)
        self.scale_net = nn.Linear(4, 1)
        self.opt = torch.optim.SGD(list(self.model.parameters()) + list(self.scale_net.parameters()), lr=0.01)
        self.scale = None

    def _get_scale(self, x):
        if self.scale is None:
            self.scale = nn.functional.softplus(self.scale_net(x)).detach()  # <-- CUT
        return self.scale

    def step(self, x, y):
        self.opt.zero_grad(set_to_none=True)
        pred = self.model(x) * self._get_scale(x)
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    trainer = Trainer()
    for _ in range(3):
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        loss = trainer.step(x, y)
    return {"trainer": trainer, "loss": loss}
