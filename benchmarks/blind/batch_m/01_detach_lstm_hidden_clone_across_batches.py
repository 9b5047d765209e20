"""Stateful char-LSTM trainer carries (h, c) from one batch to the next. The user
replaced the old `Variable(h.data)` repackaging with `.clone()`, believing it cuts
the history; it does not, so the second batch's backward walks into the first
batch's freed graph: "Trying to backward through the graph a second time".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class CharLSTM(nn.Module):
    def __init__(self, vocab=20, emb=8, hidden=16):
        super().__init__()
        self.hidden_size = hidden
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, vocab)

    def init_hidden(self, batch):
        z = torch.zeros(1, batch, self.hidden_size)
        return (z, z.clone())

    def forward(self, x, hidden):
        out, hidden = self.lstm(self.embed(x), hidden)
        return self.fc(out), hidden


def repackage_hidden(hidden):
    return tuple(h.clone() for h in hidden)  # <-- CUT


class Trainer:
    def __init__(self, model, lr=0.01):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)

    def train_epoch(self, stream, bptt=5):
        hidden = self.model.init_hidden(stream.size(0))
        losses = []
        for i in range(0, stream.size(1) - 1 - bptt + 1, bptt):
            x, y = stream[:, i:i + bptt], stream[:, i + 1:i + 1 + bptt]
            hidden = repackage_hidden(hidden)
            logits, hidden = self.model(x, hidden)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            losses.append(loss.item())
        return losses


def run():
    torch.manual_seed(0)
    model = CharLSTM()
    trainer = Trainer(model)
    stream = torch.randint(0, 20, (4, 21))
    losses = trainer.train_epoch(stream)
    return {"model": model, "trainer": trainer, "losses": losses}
