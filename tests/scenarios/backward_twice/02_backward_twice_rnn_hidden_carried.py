"""Truncated BPTT over a long sequence: the GRU hidden state returned for one
chunk is fed into the next chunk without .detach(). The second chunk's
backward reaches into the first chunk's freed graph and raises
"Trying to backward through the graph a second time".
"""
import torch
import torch.nn as nn

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    rnn = nn.GRU(3, 8, batch_first=True)
    head = nn.Linear(8, 3)
    opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.01)
    seq = torch.randn(2, 12, 3)
    hidden = torch.zeros(1, 2, 8)
    for start in range(0, 12, 4):
        chunk = seq[:, start:start + 4]
        target = seq[:, start + 1:start + 5]
        out, hidden = rnn(chunk, hidden)  # <-- CUT
        pred = head(out)[:, : target.shape[1]]
        loss = (pred - target).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"rnn": rnn, "loss": loss}
