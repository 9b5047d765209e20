"""A classifier step detaches the logits so they can be reused for an accuracy
metric, and the loss is then computed from the same detached tensor. The loss
has no grad_fn, so loss.backward() raises "element 0 of tensors does not
require grad and does not have a grad_fn".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(16, 10)
    y = torch.randint(0, 4, (16,))
    logits = model(x).detach()  # <-- CUT
    acc = (logits.argmax(1) == y).float().mean()
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "acc": acc}
