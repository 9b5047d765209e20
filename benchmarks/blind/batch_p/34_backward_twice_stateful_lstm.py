"""Stateful LSTM forecaster: the model keeps its hidden state across consecutive
batches of one long series (the commented-out code of the thread). The state is
stored without detaching, so the second batch's backward walks into the first
batch's freed graph and raises "backward through the graph a second time".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class StatefulLSTM(nn.Module):
    def __init__(self, input_dim=1, hidden_dim=16, num_layers=1):
        super().__init__()
        self.rnn = nn.LSTM(input_dim, hidden_dim, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, 1)
        self.hidden_dim, self.num_layers = hidden_dim, num_layers
        self.hidden = None

    def reset_state(self, batch_size):
        z = torch.zeros(self.num_layers, batch_size, self.hidden_dim)
        self.hidden = (z, z.clone())

    def forward(self, x):
        out, hidden = self.rnn(x, self.hidden)
        self.hidden = hidden  # <-- CUT
        return self.fc(out[:, -1]).view(-1)


def run():
    torch.manual_seed(0)
    model = StatefulLSTM()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    series = torch.sin(torch.linspace(0, 20, 4 * 65)).view(4, 65, 1)
    model.reset_state(4)
    for start in range(0, 64, 16):
        x, y = series[:, start:start + 16], series[:, start + 16, 0]
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"model": model, "loss": loss}
