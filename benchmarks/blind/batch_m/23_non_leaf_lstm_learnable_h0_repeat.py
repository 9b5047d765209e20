"""Sequence classifier with a "learnable" initial LSTM state: h0/c0 are created with
requires_grad=True and immediately `.repeat`ed to the batch size in __init__, so
the stored attributes are non-leaf results (and not Parameters). The LSTM and head
train; after backward the user checks `model.h0.grad`, which is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.h0"
EXPECT = "grad_none"

CONFIG = {"batch_size": 8, "hidden": 16, "layers": 1, "n_feat": 5, "n_cls": 3}


class SeqClassifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        H, L, B = cfg["hidden"], cfg["layers"], cfg["batch_size"]
        self.lstm = nn.LSTM(cfg["n_feat"], H, num_layers=L, batch_first=True)
        self.head = nn.Linear(H, cfg["n_cls"])
        self.h0 = torch.zeros(L, 1, H, requires_grad=True).repeat(1, B, 1)  # <-- CUT
        self.c0 = torch.zeros(L, 1, H, requires_grad=True).repeat(1, B, 1)

    def forward(self, x):
        out, _ = self.lstm(x, (self.h0, self.c0))
        return self.head(out[:, -1])


def run():
    torch.manual_seed(0)
    model = SeqClassifier(CONFIG)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(8, 6, 5), torch.randint(0, 3, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
