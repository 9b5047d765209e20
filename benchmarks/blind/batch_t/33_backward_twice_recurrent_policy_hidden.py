"""Recurrent A2C: the GRU hidden state is carried from one update to the next without detach,
so the second update's backward walks into the freed graph of the first. Target value no_grad is fine.
Thread: Trying to backward through the graph a second time, LSTM policy (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "backward_twice"
QUERY = None
EXPECT = "backward_error"

class RecurrentPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRUCell(4, 16)
        self.pi = nn.Linear(16, 2)
        self.v = nn.Linear(16, 1)
        self.h = torch.zeros(1, 16)
    def forward(self, obs):
        h = self.gru(obs, self.h)
        self.h = h  # <-- CUT
        return self.pi(h), self.v(h)

def run():
    torch.manual_seed(0)
    net = RecurrentPolicy()
    target_v = nn.Linear(16, 1)
    opt = torch.optim.Adam(net.parameters(), 1e-3)
    for t in range(2):
        logits, v = net(torch.randn(1, 4))
        with torch.no_grad():
            boot = target_v(net.h)
        adv = (1.0 + 0.99 * boot - v).detach()
        loss = -(F.log_softmax(logits, -1)[0, 0] * adv).sum() + (1.0 + 0.99 * boot - v).pow(2).sum()
        opt.zero_grad(); loss.backward(); opt.step()
    return {"net": net}
