"""Language model whose output projection is tied to the embedding by a
`tie_weights()` call, but the call happens after the optimizer was built. The
optimizer still holds the original lm_head weight, which no longer takes part
in the forward: its .grad stays None and Adam never updates it.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][-1]"
EXPECT = "grad_none"


class TinyLM(nn.Module):
    def __init__(self, vocab=50, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.rnn = nn.GRU(d, d, batch_first=True)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def tie_weights(self):
        self.lm_head.weight = self.embed.weight  # <-- CUT

    def forward(self, ids):
        h, _ = self.rnn(self.embed(ids))
        return self.lm_head(h)


def run():
    torch.manual_seed(0)
    model = TinyLM()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.tie_weights()
    ids = torch.randint(0, 50, (4, 9))
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 50), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
