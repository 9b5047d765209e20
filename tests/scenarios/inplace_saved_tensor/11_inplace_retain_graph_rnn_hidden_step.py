"""Forum classic: RNN hidden state carried across batches; the "Trying to backward
a second time" error was silenced with retain_graph=True, after which the second
batch raises the in-place error because optimizer.step() changed saved weights.
"""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    rnn = nn.RNN(3, 8, batch_first=True)
    head = nn.Linear(8, 1)
    opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.01)
    h = torch.zeros(1, 2, 8)
    for step in range(2):
        x, y = torch.randn(2, 5, 3), torch.randn(2, 1)
        out, h = rnn(x, h)
        loss = ((head(out[:, -1]) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward(retain_graph=True)
        opt.step()  # <-- CUT
    return {"rnn": rnn, "loss": loss}
