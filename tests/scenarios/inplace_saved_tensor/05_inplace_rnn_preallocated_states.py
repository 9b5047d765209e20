"""A hand-written RNN writes each hidden state into a preallocated tensor with
states[:, t] = tanh(W x_t + U states[:, t-1]). The recurrent Linear saved the
previous slice for backward; the next slice assignment bumps the shared version.
"""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class TinyRNN(nn.Module):
    def __init__(self, d_in=3, h=5):
        super().__init__()
        self.h = h
        self.inp = nn.Linear(d_in, h)
        self.rec = nn.Linear(h, h, bias=False)

    def forward(self, x):
        B, T, _ = x.shape
        states = torch.zeros(B, T + 1, self.h)
        for t in range(T):
            states[:, t + 1] = torch.tanh(self.inp(x[:, t]) + self.rec(states[:, t]))  # <-- CUT
        return states[:, 1:]


def run():
    torch.manual_seed(0)
    model = TinyRNN()
    x = torch.randn(2, 4, 3)
    loss = model(x)[:, -1].pow(2).sum()
    loss.backward()
    return {"model": model, "loss": loss}
