"""After pytorch/pytorch#14467 ("Optimizer warning when parameters change"): refactoring RNNs
for the bracket language into a base class that builds its optimizer in __init__, the memory
variant then replaces the output layer in its own __init__. The optimizer still holds the old
layer; that stale weight never gets a gradient and the new layer is never stepped.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.optimizer.param_groups[0]['params'][-2]"
EXPECT = "grad_none"

VOCAB = {"<": 0, ">": 1, "a": 2, "b": 3, "c": 4, "(": 5, ")": 6}


class BracketRNN(nn.Module):
    def __init__(self, hidden_size=12, lr=1e-2):
        super().__init__()
        self.hidden_size = hidden_size
        self.embed = nn.Embedding(len(VOCAB), 8)
        self.cell = nn.GRUCell(8, hidden_size)
        self.output = nn.Linear(hidden_size, 2)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=lr)

    def forward_step(self, x_t, h):
        raise NotImplementedError

    def forward(self, tokens):
        h = torch.zeros(tokens.shape[0], self.hidden_size)
        for t in range(tokens.shape[1]):
            h = self.forward_step(self.embed(tokens[:, t]), h)
        return self.read_out(h)

    def read_out(self, h):
        return self.output(h)


class MemoryRNN(BracketRNN):
    def __init__(self, hidden_size=12, mem_size=4):
        super().__init__(hidden_size)
        self.mem_size = mem_size
        self.output = nn.Linear(hidden_size + mem_size, 2)  # <-- CUT
        self.mem_gate = nn.Linear(hidden_size, mem_size)

    def forward_step(self, x_t, h):
        return self.cell(x_t, h)

    def read_out(self, h):
        mem = torch.sigmoid(self.mem_gate(h))
        return self.output(torch.cat([h, mem], dim=1))


def encode(words):
    return torch.tensor([[VOCAB[c] for c in w] for w in words])


def run():
    torch.manual_seed(0)
    model = MemoryRNN()
    words = ["<a(b)>", "<a(b>>", "<(ab)>", "<<a)b>"]
    labels = torch.tensor([1, 0, 1, 0])
    logits = model(encode(words))
    loss = F.cross_entropy(logits, labels)
    model.optimizer.zero_grad()
    loss.backward()
    model.optimizer.step()
    return {"model": model, "loss": loss}
