"""A tiny HF-Trainer-like loop with callbacks. The user's memory-saving callback logs the gradient
norm in `on_after_backward` and then calls `model.zero_grad(set_to_none=True)` "to free memory",
which runs before the trainer's clip + optimizer.step(), so step sees no gradients at all.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_none"


class TrainerCallback:
    def on_after_backward(self, model, state):
        pass


class GradNormLogger(TrainerCallback):
    def on_after_backward(self, model, state):
        grads = [p.grad.norm() for p in model.parameters() if p.grad is not None]
        state["grad_norm"] = float(torch.stack(grads).norm())
        model.zero_grad(set_to_none=True)  # <-- CUT


class MiniTrainer:
    def __init__(self, model, callbacks, max_grad_norm=1.0):
        self.model, self.callbacks, self.max_grad_norm = model, callbacks, max_grad_norm
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.state = {}

    def training_step(self, x, y):
        self.model.train()
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        for cb in self.callbacks:
            cb.on_after_backward(self.model, self.state)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
        self.optimizer.step()
        return loss


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
    trainer = MiniTrainer(model, [GradNormLogger()])
    x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
    trainer.optimizer.zero_grad()
    loss = trainer.training_step(x, y)
    return {"model": model, "trainer": trainer, "loss": loss}
