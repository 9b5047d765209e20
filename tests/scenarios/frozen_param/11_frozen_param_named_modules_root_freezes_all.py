"""Lightning-style trainer: an `on_fit_start` callback freezes everything except
the adapter with `for name, m in model.named_modules(): if not name.startswith("adapter")`.
The root module's name is "" so `m.requires_grad_(False)` on it freezes every
parameter recursively, adapter included; the first backward raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.adapter.weight"
EXPECT = "backward_error"


class FreezeAllButAdapter:
    def on_fit_start(self, trainer, model):
        for name, m in model.named_modules():
            if not name.startswith("adapter"):
                m.requires_grad_(False)  # <-- CUT


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.adapter = nn.Linear(16, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        h = self.backbone(x)
        return self.head(h + self.adapter(h))

    def training_step(self, batch):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class Trainer:
    def __init__(self, callbacks):
        self.callbacks = callbacks

    def fit(self, model, batches):
        opt = model.configure_optimizers()
        for cb in self.callbacks:
            cb.on_fit_start(self, model)
        for batch in batches:
            opt.zero_grad()
            loss = model.training_step(batch)
            loss.backward()
            opt.step()


def run():
    torch.manual_seed(0)
    model = Classifier()
    batches = [(torch.randn(10, 8), torch.randint(0, 3, (10,)))]
    Trainer([FreezeAllButAdapter()]).fit(model, batches)
    return {"model": model}
