"""Control: LSTM sequence regressor whose per-step predictions are written into a
preallocated torch.empty buffer by index assignment (out_seq[i] = o), and the
loss is taken on that buffer. The slot writes look like they cut the graph, but
copy_ into a fresh buffer is differentiable; linear.weight gets its gradient.
"""
import numpy as np
import torch

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "linear.weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(input_size=1, hidden_size=20, num_layers=1, batch_first=True).to(torch.double)
    linear = torch.nn.Linear(20, 1).to(torch.double)
    params = list(lstm.parameters()) + list(linear.parameters())
    optimizer = torch.optim.Adam(params, lr=1e-3)
    L = 21
    x = torch.tensor(np.arange(L) / 20, dtype=torch.double).unsqueeze(0).unsqueeze(2)
    y = torch.tensor(np.arange(2, L + 2) / 20, dtype=torch.double)
    hidden = (torch.zeros((1, 1, 20), dtype=torch.double), torch.zeros((1, 1, 20), dtype=torch.double))
    output, hidden = lstm(x, hidden)
    out_seq = torch.empty(L, dtype=torch.double)
    for i in range(L):
        out_seq[i] = linear(output[:, i, :]).squeeze()
    loss = torch.nn.functional.mse_loss(out_seq, y)  # <-- CUT
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"lstm": lstm, "linear": linear, "loss": loss, "out_seq": out_seq.detach()}
