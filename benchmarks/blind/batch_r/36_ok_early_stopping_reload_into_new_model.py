"""Control: early stopping with checkpoint reload mid-training. When validation stalls the
trainer builds a NEW model, load_state_dict()s the best checkpoint into it and rebuilds the
optimizer over the new model's parameters, so the next training step trains the new model.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.model[0].weight"
EXPECT = "grad_ok"


def build():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


class EarlyStopTrainer:
    def __init__(self, patience=1):
        self.model = build()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.05)
        self.best, self.best_state, self.bad, self.patience = float("inf"), None, 0, patience

    def train_step(self, x, y):
        loss = nn.functional.mse_loss(self.model(x), y)  # <-- CUT
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss

    @torch.no_grad()
    def validate(self, x, y):
        val = nn.functional.mse_loss(self.model(x), y).item()
        if val < self.best:
            self.best, self.best_state, self.bad = val, {k: v.clone() for k, v in self.model.state_dict().items()}, 0
        else:
            self.bad += 1
        return val

    def maybe_reload(self):
        if self.bad >= self.patience:
            self.model = build()
            self.model.load_state_dict(self.best_state)
            self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
            self.bad = 0


def run():
    torch.manual_seed(0)
    x, y = torch.randn(20, 4), torch.randn(20, 1)
    xv, yv = x[:10], -3.0 * y[:10]  # a shifted validation split: val loss rises
    trainer = EarlyStopTrainer()
    for epoch in range(4):
        loss = trainer.train_step(x, y)
        trainer.validate(xv, yv)
        trainer.maybe_reload()
    trainer.model.zero_grad()
    loss = trainer.train_step(x, y)
    return {"trainer": trainer, "loss": loss}
