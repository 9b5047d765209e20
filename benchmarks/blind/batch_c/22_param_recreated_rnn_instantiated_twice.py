"""char-rnn name classification (practical-pytorch style). The notebook creates
rnn = RNN(...) right after the class definition and builds the SGD optimizer on it; a
later cell instantiates rnn = RNN(...) again before the training loop. train() uses the
new module, so the optimizer's parameters (the first instance) never get a gradient.
"""
import torch
import torch.nn as nn

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "state['optimizer'].param_groups[0]['params'][0]"
EXPECT = "grad_none"

N_LETTERS, N_HIDDEN, N_CATEGORIES = 20, 32, 4


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        return self.softmax(self.i2o(combined)), self.i2h(combined)

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


def line_to_tensor(idx):
    t = torch.zeros(len(idx), 1, N_LETTERS)
    for i, j in enumerate(idx):
        t[i][0][j] = 1
    return t


def run():
    torch.manual_seed(0)
    state = {}
    state["rnn"] = RNN(N_LETTERS, N_HIDDEN, N_CATEGORIES)
    state["optimizer"] = torch.optim.SGD(state["rnn"].parameters(), lr=0.005)
    criterion = nn.NLLLoss()

    def train(category_tensor, line_tensor):
        rnn, optimizer = state["rnn"], state["optimizer"]
        hidden = rnn.initHidden()
        optimizer.zero_grad()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        loss = criterion(output, category_tensor)
        loss.backward()
        optimizer.step()
        return output, loss.item()

    # ... later cell: set up and run the training
    state["rnn"] = RNN(N_LETTERS, N_HIDDEN, N_CATEGORIES)  # <-- CUT
    current_loss = 0.0
    for it in range(3):
        category = torch.tensor([it % N_CATEGORIES])
        line = line_to_tensor(torch.randint(0, N_LETTERS, (5,)).tolist())
        output, loss = train(category, line)
        current_loss += loss
    return {"state": state, "current_loss": current_loss}
