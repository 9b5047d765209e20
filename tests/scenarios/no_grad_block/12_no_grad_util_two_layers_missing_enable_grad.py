"""Periodic eval runs under `torch.no_grad()`, and a "fine-tune on the val batch" step
is called from inside that block. Its `torch.enable_grad()` opens only after the
features come back from two helper layers, so the adapter output has no graph.
"""
import torch
import torch.nn as nn

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "adapter.weight"
EXPECT = "grad_none"


def pooled_features(adapter, x):
    h = adapter(x)  # <-- CUT
    return h.mean(dim=1)


def view_features(adapter, x):
    return pooled_features(adapter, x).flatten(1)


def finetune_step(adapter, head, opt, x, y):
    feats = view_features(adapter, x)
    with torch.enable_grad():
        loss = nn.functional.cross_entropy(head(feats), y)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return loss


def run():
    torch.manual_seed(0)
    adapter = nn.Linear(5, 6)
    head = nn.Linear(6, 3)
    opt = torch.optim.SGD(list(adapter.parameters()) + list(head.parameters()), lr=0.1)
    x, y = torch.randn(4, 7, 5), torch.tensor([0, 1, 2, 1])
    with torch.no_grad():
        val_acc = (head(adapter(x).mean(1)).argmax(-1) == y).float().mean()
        loss = finetune_step(adapter, head, opt, x, y)
    return {"adapter": adapter, "head": head, "loss": loss, "val_acc": val_acc}
