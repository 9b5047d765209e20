"""Multi-dataset trainer: the optimizer is built in __init__, then set_task()
replaces model.head with a fresh nn.Linear for the new dataset's class count.
The new head trains through autograd but the optimizer still holds the old head
tensors: opt.param_groups[0]['params'][-2] (the old head weight) has .grad None.
Thread: SO, head replaced after the optimizer was built (pattern; thread not located).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][-2]"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self, n_cls):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(12, 32), nn.ReLU())
        self.head = nn.Linear(32, n_cls)

    def forward(self, x):
        return self.head(self.trunk(x))


class MultiTaskTrainer:
    def __init__(self, n_cls=10):
        self.model = Net(n_cls)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)

    def set_task(self, n_cls):
        if self.model.head.out_features != n_cls:
            self.model.head = nn.Linear(self.model.head.in_features, n_cls)  # <-- CUT

    def step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    trainer = MultiTaskTrainer(n_cls=10)
    trainer.set_task(n_cls=4)
    x = torch.randn(16, 12)
    y = torch.randint(0, 4, (16,))
    loss = trainer.step(x, y)
    return {"trainer": trainer, "model": trainer.model, "opt": trainer.opt, "loss": loss}
