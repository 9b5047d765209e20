"""Passing a custom optimizer to a HF-Trainer-like class: the script builds the AdamW optimizer
from `model.parameters()`, then (in the other branch of an if/else kept from experimenting)
reloads the model with from_pretrained. The trainer steps the old parameters, which get no grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.optimizer.param_groups[0]['params'][0]"
EXPECT = "grad_none"

_PRETRAINED = {}


class AlbertLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 32), nn.GELU())
        self.classifier = nn.Linear(32, 2)

    def forward(self, x):
        return self.classifier(self.encoder(x))

    @classmethod
    def from_pretrained(cls, name):
        m = cls()
        if name in _PRETRAINED:
            m.load_state_dict(_PRETRAINED[name])
        return m


class MiniTrainer:
    def __init__(self, model, optimizers=(None, None)):
        self.model = model
        self.optimizer = optimizers[0] or torch.optim.AdamW(model.parameters(), lr=2e-5)

    def train_step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss


def run():
    torch.manual_seed(0)
    PASS_OPTIMIZER_TO_TRAINER = True
    model = AlbertLike.from_pretrained("albert-large-v2")
    decay = [p for n, p in model.named_parameters() if "bias" not in n]
    no_decay = [p for n, p in model.named_parameters() if "bias" in n]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=2e-5)
    if PASS_OPTIMIZER_TO_TRAINER:
        model = AlbertLike.from_pretrained("albert-large-v2")  # <-- CUT
        trainer = MiniTrainer(model, optimizers=(optimizer, None))
    else:
        trainer = MiniTrainer(model)
    x, y = torch.randn(8, 10), torch.randint(0, 2, (8,))
    loss = trainer.train_step(x, y)
    return {"trainer": trainer, "model": model, "loss": loss}
