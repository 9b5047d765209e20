"""Class-incremental continual learning: when task 2 arrives the trainer expands
the classifier by building a new nn.Linear with more outputs and copying the old
rows in. The optimizer was built before the expansion, so it keeps stepping the
old head weight, which no longer gets any gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.opt.param_groups[0]['params'][-2]"
EXPECT = "grad_none"


class IncrementalNet(nn.Module):
    def __init__(self, n_cls):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(9, 18), nn.ReLU())
        self.fc = nn.Linear(18, n_cls)

    def forward(self, x):
        return self.fc(self.backbone(x))


class Trainer:
    def __init__(self):
        self.model = IncrementalNet(3)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.05)

    def add_classes(self, n_new):
        old = self.model.fc
        new = nn.Linear(old.in_features, old.out_features + n_new)
        with torch.no_grad():
            new.weight[: old.out_features] = old.weight
            new.bias[: old.out_features] = old.bias
        self.model.fc = new  # <-- CUT

    def step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    trainer = Trainer()
    trainer.step(torch.randn(8, 9), torch.randint(0, 3, (8,)))
    trainer.add_classes(2)
    loss = trainer.step(torch.randn(8, 9), torch.randint(3, 5, (8,)))
    return {"trainer": trainer, "loss": loss}
