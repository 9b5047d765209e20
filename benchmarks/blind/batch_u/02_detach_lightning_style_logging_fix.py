"""Lightning-style training step (pytorch/pytorch#44023, "Can't call numpy() on Tensor
that requires grad"): to make a metrics callback stop crashing, the user rebinds
`logits = logits.detach()` in training_step before the loss is computed, so the
encoder never gets a gradient (only the weight-decay term keeps a graph)."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "module.encoder[0].weight"
EXPECT = "grad_none"


class MNISTModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(28 * 28, 64), nn.ReLU())
        self.classifier = nn.Linear(64, 10)
        self.history = []

    def forward(self, x):
        return self.classifier(self.encoder(x.flatten(1)))

    def log_metrics(self, logits, y):
        probs = np.asarray(logits.softmax(-1).numpy())
        self.history.append(float((probs.argmax(1) == y.numpy()).mean()))

    def training_step(self, batch):
        x, y = batch
        logits = self(x)
        logits = logits.detach()  # <-- CUT
        self.log_metrics(logits, y)
        loss = F.cross_entropy(logits, y)
        # second, auxiliary term so the returned loss still "has a graph"
        reg = 1e-4 * sum(p.pow(2).sum() for p in self.classifier.parameters())
        return loss + reg


def run():
    torch.manual_seed(0)
    module = MNISTModule()
    opt = torch.optim.Adam(module.parameters(), lr=1e-3)
    batch = (torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,)))
    opt.zero_grad()
    loss = module.training_step(batch)
    loss.backward()
    opt.step()
    return {"module": module, "loss": loss}
