"""Trainer that builds model and optimizer in __init__, then resume() rebuilds the model
from a checkpoint (self.model = Net(); load_state_dict) instead of loading into the
existing one. The user inspects optimizer.param_groups[0]['params'][0].grad as in the
forum thread: it stays None, because the optimizer still holds the old model's tensors.
Thread: discuss.pytorch.org/t/how-to-interpret-the-grad-tensor-in-the-optimizer/34892
"""
import torch
import torch.nn as nn

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.opt.param_groups[0]['params'][0]"
EXPECT = "grad_none"


def make_net(hidden):
    return nn.Sequential(nn.Linear(2, hidden), nn.Sigmoid(), nn.Linear(hidden, 1), nn.Sigmoid())


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.model = make_net(cfg["hidden"])
        self.opt = torch.optim.SGD(self.model.parameters(), lr=cfg["lr"])
        self.criterion = nn.L1Loss()

    def resume(self, ckpt):
        self.model = make_net(self.cfg["hidden"])  # <-- CUT
        self.model.load_state_dict(ckpt["model"])

    def step(self, X, Y):
        loss = self.criterion(self.model(X), Y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(42)
    X = torch.tensor([[0, 0], [0, 1], [1, 0], [1, 1]]).float()
    Y = torch.tensor([[0], [1], [1], [0]]).float()
    trainer = Trainer({"hidden": 5, "lr": 0.3})
    ckpt = {"model": {k: v.clone() for k, v in make_net(5).state_dict().items()}}
    trainer.resume(ckpt)
    loss = trainer.step(X, Y)
    return {"trainer": trainer, "loss": loss}
