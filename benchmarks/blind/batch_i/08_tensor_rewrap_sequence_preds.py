"""Seq2one forecaster that unrolls a GRUCell, collects per-step predictions in a
list of 0-d tensors and packs them with torch.tensor(preds) for the sequence MSE. A hidden-state
regulariser keeps the loss connected to the cell, so backward runs, but the
prediction head never gets a gradient: model.head.weight.grad is None.
Thread: SO "Convert a list of tensors to tensors of tensors pytorch" (recalled).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.head.weight"
EXPECT = "grad_none"


class Forecaster(nn.Module):
    def __init__(self, d_in=3, d_h=16):
        super().__init__()
        self.cell = nn.GRUCell(d_in, d_h)
        self.head = nn.Linear(d_h, 1)
        self.d_h = d_h

    def forward(self, seq):
        h = seq.new_zeros(1, self.d_h)
        preds, states = [], []
        for t in range(seq.size(0)):
            h = self.cell(seq[t].unsqueeze(0), h)
            states.append(h)
            preds.append(self.head(h).squeeze())
        out = torch.tensor(preds)  # <-- CUT
        return out, torch.stack(states)


def run():
    torch.manual_seed(0)
    model = Forecaster()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    seq = torch.randn(6, 3)
    target = torch.randn(6)
    pred, states = model(seq)
    loss = F.mse_loss(pred, target) + 1e-3 * states.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss, "pred": pred}
