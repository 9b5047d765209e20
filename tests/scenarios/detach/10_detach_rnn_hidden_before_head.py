"""Truncated BPTT over chunks of a long sequence: the user detaches the LSTM
state to stop gradients between chunks, but does it right after the LSTM call
and then feeds the detached `h` to the prediction head. The LSTM never gets a
gradient; only the head trains.
"""
import torch
import torch.nn as nn

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "lstm.weight_ih_l0"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    lstm = nn.LSTM(input_size=3, hidden_size=8, batch_first=True)
    head = nn.Linear(8, 1)
    optimizer = torch.optim.Adam(list(lstm.parameters()) + list(head.parameters()), lr=1e-3)
    seq = torch.randn(2, 12, 3)
    target = torch.randn(2, 12, 1)
    state = None
    for start in range(0, 12, 4):
        x = seq[:, start:start + 4]
        out, (h, c) = lstm(x, state)
        h, c = h.detach(), c.detach()  # <-- CUT
        state = (h, c)
        pred = head(h[-1])
        loss = ((pred - target[:, start + 3]) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {"lstm": lstm, "head": head, "loss": loss}
