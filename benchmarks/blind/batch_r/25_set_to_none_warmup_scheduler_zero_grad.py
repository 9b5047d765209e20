"""Trainer with a hand-written linear learning-rate warmup. The warmup helper rebuilds the
param-group lr and "resets the optimizer state" with zero_grad(); it is called between
backward() and the gradient clipping / step(), so the grads are None when they are read.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_none"

CFG = {"base_lr": 1e-3, "warmup_steps": 10, "clip": 1.0}


class Trainer:
    def __init__(self, model, cfg):
        self.model, self.cfg = model, cfg
        self.opt = torch.optim.AdamW(model.parameters(), lr=cfg["base_lr"])
        self.global_step = 0

    def warmup_lr(self):
        scale = min(1.0, (self.global_step + 1) / self.cfg["warmup_steps"])
        for group in self.opt.param_groups:
            group["lr"] = self.cfg["base_lr"] * scale
        self.opt.zero_grad()  # <-- CUT

    def train_step(self, x, y):
        self.model.train()
        loss = nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        self.warmup_lr()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg["clip"])
        self.opt.step()
        self.global_step += 1
        return loss


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    trainer = Trainer(model, CFG)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    loss = trainer.train_step(x, y)
    return {"model": model, "trainer": trainer, "loss": loss}
