"""LightningModule-like LSTM LM that reuses the previous training step's hidden state
(`self.previous_hidden`), as suggested in the thread, but stores it without detach_tensors().
The second step's backward walks into the first step's freed graph and raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class LitLSTM(nn.Module):
    def __init__(self, vocab=30, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, d, batch_first=True)
        self.decoder = nn.Linear(d, vocab)
        self.previous_hidden = None

    def training_step(self, batch, batch_idx):
        text, target = batch
        output, hidden = self.lstm(self.embed(text), self.previous_hidden)
        self.previous_hidden = hidden  # <-- CUT
        logits = self.decoder(output)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), target.reshape(-1))


class MiniTrainer:
    def fit(self, model, batches):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for i, batch in enumerate(batches):
            loss = model.training_step(batch, i)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss


def run():
    torch.manual_seed(0)
    model = LitLSTM()
    stream = torch.randint(0, 30, (2, 19))
    batches = [(stream[:, i:i + 6], stream[:, i + 1:i + 7]) for i in (0, 6, 12)]
    loss = MiniTrainer().fit(model, batches)
    return {"model": model, "loss": loss}
