"""Multi-task LightningModule with learned uncertainty weighting. To log the task weights,
training_step turns `exp(precision_logits[i])` into floats with `.item()` and then reuses those
floats in the weighted loss, so the precision logits never get a gradient; the heads train.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.precision_logits"
EXPECT = "grad_none"


class MultiTaskModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, 32), nn.ReLU())
        self.seg_head = nn.Linear(32, 4)
        self.depth_head = nn.Linear(32, 1)
        self.precision_logits = nn.Parameter(torch.zeros(2))
        self.logged = {}

    def log(self, name, value):
        self.logged[name] = value

    def training_step(self, batch):
        x, y_cls, y_depth = batch
        h = self.trunk(x)
        losses = [F.cross_entropy(self.seg_head(h), y_cls),
                  F.l1_loss(self.depth_head(h).squeeze(1), y_depth)]
        weights = [torch.exp(self.precision_logits[i]).item() for i in range(2)]  # <-- CUT
        for i, w in enumerate(weights):
            self.log(f"task_weight_{i}", w)
        return sum(w * l for w, l in zip(weights, losses))


def run():
    torch.manual_seed(0)
    model = MultiTaskModule()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch = (torch.randn(16, 8), torch.randint(0, 4, (16,)), torch.randn(16))
    loss = model.training_step(batch)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
