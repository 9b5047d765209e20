"""Control: gradient accumulation over micro-batches for a token-level loss.
Each micro-batch's summed loss is divided by `int(mask.sum())`, a Python int
taken from a tensor. Dividing by a constant is fine: the model gets gradients.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.embed.weight"
EXPECT = "grad_ok"


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 16)
        self.out = nn.Linear(16, 20)

    def forward(self, tok):
        return self.out(torch.tanh(self.embed(tok)))


def run():
    torch.manual_seed(0)
    model = TinyLM()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(1, 20, (4, 9))
    tokens[:, 6:] = 0
    opt.zero_grad()
    for mb in tokens.split(2):
        inp, tgt = mb[:, :-1], mb[:, 1:]
        mask = tgt != 0
        n_tok = int(mask.sum())
        ce = F.cross_entropy(model(inp).reshape(-1, 20), tgt.reshape(-1), reduction="none")
        loss = (ce * mask.reshape(-1)).sum() / n_tok  # <-- CUT
        loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
