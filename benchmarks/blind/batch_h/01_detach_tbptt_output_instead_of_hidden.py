"""Char-level LSTM trained with truncated BPTT over chunks. After hitting "Trying to
backward through the graph a second time", the user added .detach() to the LSTM
*output* fed to the decoder instead of to the carried hidden state. The error goes away,
the decoder trains, but the LSTM weights never get a gradient.
Thread: discuss.pytorch.org/t/runtimeerror-trying-to-backward-through-the-graph-a-second-time-.../6795
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.rnn.weight_ih_l0"
EXPECT = "grad_none"


class CharLM(nn.Module):
    def __init__(self, vocab=20, emb=8, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, batch_first=True)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens, state):
        out, state = self.rnn(self.embed(tokens), state)
        out = out.detach()  # <-- CUT
        return self.decoder(out), state


class TBPTTTrainer:
    def __init__(self, model, bptt=5, lr=1e-3):
        self.model, self.bptt = model, bptt
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.history = []

    def run_epoch(self, stream):
        state = None
        for i in range(0, stream.shape[1] - 1, self.bptt):
            inp = stream[:, i:i + self.bptt]
            tgt = stream[:, i + 1:i + 1 + self.bptt]
            inp = inp[:, :tgt.shape[1]]
            logits, state = self.model(inp, state)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1))
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.history.append(loss.item())
        return loss


def run():
    torch.manual_seed(0)
    model = CharLM()
    trainer = TBPTTTrainer(model)
    stream = torch.randint(0, 20, (3, 16))
    loss = trainer.run_epoch(stream)
    return {"model": model, "trainer": trainer, "loss": loss}
