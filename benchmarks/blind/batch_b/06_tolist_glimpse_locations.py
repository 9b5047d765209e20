"""Recurrent attention model (cf. kevinzakka/recurrent-visual-attention#4, where
the glimpse step leaves torch): the location head's output l_t is turned into
Python coordinates with .tolist() to crop glimpses, and the same list is re-wrapped
to feed the "where" pathway. loc_net.fc.weight.grad is None after backward().
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.loc_net.fc.weight"
EXPECT = "grad_none"


class LocationNetwork(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.fc = nn.Linear(hidden, 2)

    def forward(self, h_t):
        return torch.tanh(self.fc(h_t))


class GlimpseNetwork(nn.Module):
    def __init__(self, g=4, hidden=16):
        super().__init__()
        self.g = g
        self.fc_what = nn.Linear(g * g, hidden)
        self.fc_where = nn.Linear(2, hidden)

    def extract(self, x, coords):
        H = x.shape[-1]
        patches = []
        for i, (cx, cy) in enumerate(coords):
            px = int((cx + 1) / 2 * (H - self.g))
            py = int((cy + 1) / 2 * (H - self.g))
            patches.append(x[i, 0, py:py + self.g, px:px + self.g].reshape(-1))
        return torch.stack(patches)

    def forward(self, x, l_t):
        coords = l_t.tolist()  # <-- CUT
        phi = self.extract(x, coords)
        where = self.fc_where(torch.tensor(coords))
        return F.relu(self.fc_what(phi) + where)


class RAM(nn.Module):
    def __init__(self, hidden=16, n_cls=10):
        super().__init__()
        self.glimpse = GlimpseNetwork(hidden=hidden)
        self.rnn = nn.RNNCell(hidden, hidden)
        self.loc_net = LocationNetwork(hidden)
        self.classifier = nn.Linear(hidden, n_cls)

    def forward(self, x, n_glimpses=3):
        h_t = torch.zeros(x.shape[0], 16)
        l_t = torch.zeros(x.shape[0], 2)
        for _ in range(n_glimpses):
            h_t = self.rnn(self.glimpse(x, l_t), h_t)
            l_t = self.loc_net(h_t)
        return self.classifier(h_t)


def run():
    torch.manual_seed(0)
    model = RAM()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    x = torch.rand(4, 1, 12, 12)
    y = torch.randint(0, 10, (4,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
