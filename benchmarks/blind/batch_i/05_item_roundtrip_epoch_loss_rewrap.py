"""Training loop that sums per-batch losses with loss.item() into a Python
float and then calls torch.tensor(total, requires_grad=True).backward() once per
accumulation window (the user got "'float' object has no attribute 'backward'"
first). backward runs on a fresh leaf; the model's weights get no grad.
Thread: SO "AttributeError: 'float' object has no attribute 'backward'" (recalled).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.layers[0].weight"
EXPECT = "grad_none"

CONFIG = {"accum_steps": 3, "lr": 1e-2, "batch": 8}


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))

    def forward(self, x):
        return self.layers(x)


class Trainer:
    def __init__(self, model, cfg):
        self.model, self.cfg = model, cfg
        self.optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
        self.history = []

    def accumulate(self, batches):
        running = 0.0
        for x, y in batches:
            loss = F.cross_entropy(self.model(x), y)
            running += loss.item()  # <-- CUT
        return running / len(batches)

    def step(self, batches):
        avg = self.accumulate(batches)
        total = torch.tensor(avg, requires_grad=True)
        self.optimizer.zero_grad()
        total.backward()
        self.optimizer.step()
        self.history.append(avg)
        return total


def run():
    torch.manual_seed(0)
    model = MLP()
    trainer = Trainer(model, CONFIG)
    batches = [(torch.randn(CONFIG["batch"], 10), torch.randint(0, 3, (CONFIG["batch"],)))
               for _ in range(CONFIG["accum_steps"])]
    total = trainer.step(batches)
    return {"model": model, "trainer": trainer, "total": total}
