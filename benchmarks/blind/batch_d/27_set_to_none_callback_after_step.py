"""YOLO-style trainer: optimizer_step() unscales, clips, steps and then calls
`optimizer.zero_grad(set_to_none=True)` (the memory-saving switch). A custom
callback registered for "on_train_batch_end" logs gradient norms from
param.grad, but it runs after optimizer_step, so every grad is None
(ultralytics/ultralytics#22351 compatibility note; adapted).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.model[0].weight"
EXPECT = "grad_none"


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937, nesterov=True)
        self.callbacks = {"on_train_batch_end": []}
        self.grad_log = []

    def add_callback(self, event, fn):
        self.callbacks[event].append(fn)

    def run_callbacks(self, event):
        for cb in self.callbacks[event]:
            cb(self)

    def optimizer_step(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=10.0)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)  # <-- CUT

    def train_batch(self, imgs, targets):
        loss = F.cross_entropy(self.model(imgs), targets)
        loss.backward()
        self.optimizer_step()
        self.run_callbacks("on_train_batch_end")
        return loss


def log_grad_norms(trainer):
    norms = {n: (p.grad.norm().item() if p.grad is not None else None)
             for n, p in trainer.model.named_parameters()}
    trainer.grad_log.append(norms)


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.SiLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))
    trainer = Trainer(model)
    trainer.add_callback("on_train_batch_end", log_grad_norms)
    loss = trainer.train_batch(torch.randn(4, 3, 8, 8), torch.tensor([0, 1, 2, 3]))
    return {"trainer": trainer, "loss": loss}
