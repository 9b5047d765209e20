"""Lightning-AI/pytorch-lightning#19517: "Linear layer has no grad when I forward
twice and the first time under torch.no_grad()". The layer lazily caches its
masked weight on first use; the first forward is Lightning's validation sanity check
under no_grad, so the cache has no history and linear.weight.grad stays None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.linear.weight"
EXPECT = "grad_none"


class MaskedLinear(nn.Linear):
    def __init__(self, d_in, d_out):
        super().__init__(d_in, d_out)
        self.register_buffer("mask", (torch.rand(d_out, d_in) > 0.2).float())
        self._cached_weight = None

    def forward(self, x):
        if self._cached_weight is None:
            self._cached_weight = self.weight * self.mask
        return F.linear(x, self._cached_weight, self.bias)


class LitModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = MaskedLinear(8, 4)

    def validation_step(self, batch):
        x, y = batch
        return F.cross_entropy(self.linear(x), y)

    def training_step(self, batch):
        x, y = batch
        return F.cross_entropy(self.linear(x), y)


def fit(model, optimizer, train_batch, val_batch, num_sanity_val_steps=1):
    for _ in range(num_sanity_val_steps):
        with torch.no_grad():
            val_loss = model.validation_step(val_batch)  # <-- CUT
    loss = model.training_step(train_batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss, val_loss


def run():
    torch.manual_seed(0)
    model = LitModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_batch = (torch.randn(8, 8), torch.randint(0, 4, (8,)))
    val_batch = (torch.randn(8, 8), torch.randint(0, 4, (8,)))
    loss, val_loss = fit(model, optimizer, train_batch, val_batch)
    return {"model": model, "loss": loss, "val_loss": val_loss}
