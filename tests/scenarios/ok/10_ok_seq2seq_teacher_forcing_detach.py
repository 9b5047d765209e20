"""Control: greedy decoding without teacher forcing, as in the classic seq2seq
tutorial: the next decoder input is topi.squeeze().detach(). The decoder's
weights still get gradients through every step's loss.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "decoder.out.weight"
EXPECT = "grad_ok"


class Decoder(nn.Module):
    def __init__(self, vocab=12, h=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, h)
        self.gru = nn.GRU(h, h)
        self.out = nn.Linear(h, vocab)

    def forward(self, tok, hidden):
        o, hidden = self.gru(F.relu(self.emb(tok)).view(1, 1, -1), hidden)
        return F.log_softmax(self.out(o[0]), dim=1), hidden


def run():
    torch.manual_seed(0)
    decoder = Decoder()
    target = torch.randint(0, 12, (4, 1))
    hidden = torch.zeros(1, 1, 8)
    tok = torch.tensor([[0]])
    loss = 0
    for t in range(4):
        logp, hidden = decoder(tok, hidden)
        topv, topi = logp.topk(1)
        tok = topi.squeeze().detach()
        loss = loss + F.nll_loss(logp, target[t])  # <-- CUT
    loss.backward()
    return {"decoder": decoder, "loss": loss}
