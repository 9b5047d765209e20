"""LSTM language model in a LightningModule-like class that carries the hidden state across
training steps. The answer said to store `detach_tensors(hidden)`; the user passes the whole
`(output, hidden)` pair through the helper, so the LSTM output is detached too and only the
decoder trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.rnn.weight_ih_l0"
EXPECT = "grad_none"


def detach_tensors(obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach()
    return tuple(detach_tensors(o) for o in obj)


class LSTMLanguageModel(nn.Module):
    def __init__(self, vocab=40, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.rnn = nn.LSTM(d, d, batch_first=True)
        self.decoder = nn.Linear(d, vocab)
        self.previous_hidden = None

    def training_step(self, batch):
        text, target = batch
        output, hidden = self.rnn(self.embed(text), self.previous_hidden)
        output, self.previous_hidden = detach_tensors((output, hidden))  # <-- CUT
        logits = self.decoder(output)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), target.reshape(-1))


def run():
    torch.manual_seed(0)
    model = LSTMLanguageModel()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    data = torch.randint(0, 40, (2, 3, 7))
    for step in range(2):
        seq = data[step]
        batch = (seq[:, :-1], seq[:, 1:])
        opt.zero_grad()
        loss = model.training_step(batch)
        loss.backward()
        opt.step()
    return {"model": model, "loss": loss}
