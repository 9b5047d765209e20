"""Control: truncated BPTT language model. The hidden state is carried across
chunks and detached at each chunk boundary (tuple(h.detach() ...)), perplexity is
logged with `.item()` and an eval pass runs under no_grad. The LSTM's input weights
get a nonzero gradient from the last chunk's loss.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.lstm.weight_ih_l0"
EXPECT = "grad_ok"


class WordLSTM(nn.Module):
    def __init__(self, vocab=30, emb=8, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True)
        self.decoder = nn.Linear(hidden, vocab)
        self.hidden_size = hidden

    def forward(self, x, hidden=None):
        out, hidden = self.lstm(self.embed(x), hidden)
        return self.decoder(out), hidden


def detach_hidden(hidden):
    return tuple(h.detach() for h in hidden)


def run():
    torch.manual_seed(0)
    model = WordLSTM()
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    stream = torch.randint(0, 30, (2, 25))
    hidden, ppl = None, []
    for i in range(0, 20, 5):
        x, y = stream[:, i:i + 5], stream[:, i + 1:i + 6]
        if hidden is not None:
            hidden = detach_hidden(hidden)
        logits, hidden = model(x, hidden)
        loss = F.cross_entropy(logits.reshape(-1, 30), y.reshape(-1))  # <-- CUT
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
        ppl.append(float(torch.exp(loss.detach())))
    with torch.no_grad():
        val_logits, _ = model(stream[:, 20:24])
    return {"model": model, "ppl": ppl, "val_logits": val_logits}
