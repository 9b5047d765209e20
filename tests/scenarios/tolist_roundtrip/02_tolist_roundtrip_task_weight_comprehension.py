"""Multi-task model with learnable task weights stored in an nn.ParameterList.
The weighted sum is built with a list comprehension over
`weights.tolist()`, so every weight is a Python float: the trunk and heads
train, but the task logits never get a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.task_logits[1]"
EXPECT = "grad_none"


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.heads = nn.ModuleList([nn.Linear(32, 3), nn.Linear(32, 1), nn.Linear(32, 2)])
        self.task_logits = nn.ParameterList([nn.Parameter(torch.zeros(())) for _ in range(3)])

    def forward(self, x):
        h = self.trunk(x)
        return [head(h) for head in self.heads]

    def combine(self, losses):
        weights = torch.stack(list(self.task_logits)).softmax(0)
        return sum(w * l for w, l in zip(weights.tolist(), losses))  # <-- CUT


def run():
    torch.manual_seed(0)
    model = MultiTask()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(16, 10)
    y_cls = torch.randint(0, 3, (16,))
    y_reg = torch.randn(16, 1)
    y_bin = torch.randint(0, 2, (16,))
    out_cls, out_reg, out_bin = model(x)
    losses = [F.cross_entropy(out_cls, y_cls), F.mse_loss(out_reg, y_reg), F.cross_entropy(out_bin, y_bin)]
    loss = model.combine(losses)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
